import ArgumentParser
import Fleet
import Foundation
import Ingest

/// Where the commands that change a published video (`playback`, `captions`) find it: its
/// store (the spool's, or the queue's, migrated first) and the CDN it was published to.
struct PublishedVideoOptions: ParsableArguments {
    typealias Store = any JobStore & PlaybackStore & CaptionStore

    @Option(help: ArgumentHelp("Spool directory (the videos of `ingestd watch`).", valueName: "dir"))
    var spool: String?

    @OptionGroup var databaseOption: DatabaseOption

    @Option(help: ArgumentHelp("The CDN the video was published to: the directory or s3://bucket/prefix `watch` or `worker` was given.", valueName: "dir|s3-prefix"))
    var cdn: String

    @OptionGroup var storage: StorageOption

    func validate() throws {
        guard (spool != nil) != databaseOption.isGiven else {
            throw ValidationError("give --spool DIR or --database URL (or set INGESTD_DATABASE_URL), not both")
        }
    }

    /// The CDN as an output target.
    func target(json: Bool) throws -> any OutputTarget {
        try storage.target(cdn: cdn, pointer: spool != nil, json: json)
    }

    /// Runs `body` with the store open.
    func withStore<T: Sendable>(label: String, _ body: @Sendable (Store) async throws -> T) async throws -> T {
        if let spool {
            try WorkerOptions.requireRoot("--spool", SpoolLayout(root: spool).root)
            return try await body(SpoolStore(layout: SpoolLayout(root: spool)))
        }
        let database = try databaseOption.resolve()
        let logger = Log.make(label: label)
        return try await database.withClient(logger: logger) { client in
            try await QueueSchema.migrate(client, logger: logger)
            return try await body(PostgresStore.producer(JobQueue(client: client, logger: logger, timeout: database.callTimeout)))
        }
    }
}
