import Fleet
import Ingest
import Foundation
import Hummingbird
import Logging
import ObjectStorage
import PostgresNIO
import ServiceLifecycle

extension UploadServer {
    /// Fleet mode's storage: the job queue's database and the bucket the workers take uploads from.
    public struct Fleet: Sendable {
        /// Running (a service beside the server), with the queue's schema migrated.
        public var client: PostgresClient
        /// How long one database call may take.
        public var timeout: Duration
        public var storage: S3Client
        /// `s3://bucket/prefix`, the workers' `--uploads`: an upload's object is `<prefix>/<id>/<filename>`.
        public var uploads: S3Location
        /// A local directory for request bodies on their way to the bucket (at most one part each).
        public var scratch: String

        public init(client: PostgresClient, timeout: Duration, storage: S3Client, uploads: S3Location, scratch: String) {
            self.client = client
            self.timeout = timeout
            self.storage = storage
            self.uploads = uploads
            self.scratch = scratch
        }
    }

    /// The fleet server (`serve --database … --uploads s3://…`), with its upkeep beside it: run it
    /// as a service, or drive it with HummingbirdTesting.
    public static func make(_ configuration: Configuration, fleet: Fleet, metrics: UploadMetrics, logger: Logger) throws -> some ApplicationProtocol {
        let scratch = try ServeScratch.make(base: fleet.scratch)
        let store = FleetUploadStore(rows: FleetUploadRows(client: fleet.client, logger: logger, timeout: fleet.timeout),
                                     jobs: .producer(JobQueue(client: fleet.client, logger: logger, timeout: fleet.timeout)),
                                     submitter: Submitter(preset: configuration.preset, playback: configuration.playback), s3: fleet.storage,
                                     root: fleet.uploads, publicURL: configuration.publicURL, scratch: scratch, logger: logger)
        return application(configuration, store: store, services: [UploadUpkeep(store: store, metrics: metrics, logger: logger)],
                           metrics: metrics, logger: logger)
    }
}
