import ArgumentParser
import Fleet
import Foundation
import Ingest
import Logging
import ObjectStorage
import ServiceLifecycle
import Uploads

extension ServeCommand {
    /// Fleet mode: the queue's schema migrated first (exit 69 when the database cannot be
    /// used), then the server with a running database client beside it.
    func runFleet(_ configuration: UploadServer.Configuration, logger: Logger) async throws {
        guard let uploads else { throw ValidationError("fleet mode needs --uploads s3://bucket/prefix") }
        let root: S3Location
        do {
            let prefix = try BucketUploadsRoot(uploads).prefix
            guard let location = try S3Location(url: prefix) else { throw ValidationError("--uploads \(uploads): not s3://bucket/prefix") }
            root = location
        } catch let error as ValidationError {
            throw error
        } catch {
            throw Report.fail(MissingRoot(option: "--uploads", path: uploads, detail: "\(error)"), json: false)
        }
        let client = try storage.client()
        let database = try databaseOption.resolve(jobs: 8)
        try await database.migrate(logger: logger)
        let postgres = database.makeClient(logger: logger)
        let fleet = UploadServer.Fleet(client: postgres, timeout: database.callTimeout, storage: client, uploads: root, scratch: scratch)
        let server = try Report.catching { try UploadServer.make(configuration, fleet: fleet, metrics: UploadMetrics(), logger: logger) }
        logger.info("serving uploads (fleet)", metadata: ["http": "\(http)", "uploads": "\(root)", "database": "\(database)"])
        let group = ServiceGroup(configuration: .init(services: [postgres, server], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }
}
