import Fleet
import Foundation
import Ingest

/// The store a command that changes published videos opens (`playback`, `captions`): the
/// spool's (`--spool`), or the queue's (`--database`, migrated first).
enum PublishedVideoStore {
    typealias Store = any JobStore & PlaybackStore & CaptionStore

    static func with<T: Sendable>(spool: String?, database option: DatabaseOption, label: String,
                                  _ body: @Sendable (Store) async throws -> T) async throws -> T {
        if let spool {
            try WorkerOptions.requireRoot("--spool", SpoolLayout(root: spool).root)
            return try await body(SpoolStore(layout: SpoolLayout(root: spool)))
        }
        let database = try option.resolve()
        let logger = Log.make(label: label)
        return try await database.withClient(logger: logger) { client in
            try await QueueSchema.migrate(client, logger: logger)
            return try await body(PostgresStore.producer(JobQueue(client: client, logger: logger, timeout: database.callTimeout)))
        }
    }
}
