import ArgumentParser
import Fleet
import Foundation
import Ingest

/// `ingestd retry`: an operator puts failed jobs back in the queue.
struct RetryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "retry",
        abstract: "Put failed jobs back in the queue, their attempts reset.",
        discussion: """
        Each job named that is failed goes back to queued with its attempts reset and a \
        `retried` event; one in any other state is left as it is (so a retry asked twice runs \
        once). With --rejected, rejected jobs too: for uploads refused by a limit since raised. \
        Works on the spool (whether or not its daemon runs) or the PostgreSQL queue.
          ingestd retry --spool /var/spool/ingestd clip-1f2e3d4c5b6a7980
          ingestd retry --database postgres://ingestd@db/ingestd --rejected --json id1 id2
        Prints the ids retried and those skipped; exit 0 when every id named was retried, 1 \
        when some were not (not failed, deleted, or no such job).
        """
    )

    @Option(help: ArgumentHelp("Spool directory.", valueName: "dir"))
    var spool: String?

    @OptionGroup var databaseOption: DatabaseOption

    @Flag(help: "Retry rejected jobs too (the limits that refused them changed).")
    var rejected = false

    @Flag(help: "Print the result as JSON: {\"retried\": [...], \"skipped\": [...]}.")
    var json = false

    @Argument(help: ArgumentHelp("Job ids.", valueName: "id"))
    var ids: [String]

    func validate() throws {
        guard spool != nil || databaseOption.isGiven else {
            throw ValidationError("give --spool DIR or --database URL (or set INGESTD_DATABASE_URL)")
        }
        guard !ids.isEmpty, ids.count <= 10_000 else { throw ValidationError("name 1 to 10000 job ids") }
    }

    func run() async throws {
        var retried: [String], deleted: Set<String> = []
        if let spool {
            try WorkerOptions.requireRoot("--spool", SpoolLayout(root: spool).root)
            let store = SpoolStore(layout: SpoolLayout(root: spool))
            retried = try await store.retry(ids, rejected: rejected)
            deleted = try await Self.deleted(Set(ids).subtracting(retried), in: store)
        } else {
            let database = try databaseOption.resolve()
            let logger = Log.make(label: "ingestd.retry")
            let (ids, rejected) = (ids, rejected)
            do {
                (retried, deleted) = try await database.withClient(logger: logger) { client in
                    let store = PostgresStore.producer(JobQueue(client: client, logger: logger, timeout: database.callTimeout))
                    let retried = try await store.retry(ids, rejected: rejected)
                    return (retried, try await Self.deleted(Set(ids).subtracting(retried), in: store))
                }
            } catch {
                throw Report.fail(QueueUnavailable(database: database, error: error), json: json)
            }
        }
        let skipped = Array(Set(ids).subtracting(retried)).sorted()
        if json {
            print(String(decoding: try JSONEncoder.ingestd.encode(["retried": retried, "skipped": skipped]), as: UTF8.self))
        } else {
            for id in retried { print("retried  \(id)") }
            for id in skipped {
                print("skipped  \(id) (" + (deleted.contains(id) ? "deleted: a deleted video never runs again" : "not \(rejected ? "failed or rejected" : "failed"), or no such job") + ")")
            }
        }
        if !skipped.isEmpty { throw ExitCode(ExitStatus.failure.rawValue) }
    }

    /// Which of `ids` were deleted (`ingestd delete`): said so, not "no such job".
    static func deleted(_ ids: Set<String>, in store: any DeletionStore) async throws -> Set<String> {
        var deleted: Set<String> = []
        for id in ids.prefix(100) where try await store.tombstone(id) != nil { deleted.insert(id) }
        return deleted
    }
}
