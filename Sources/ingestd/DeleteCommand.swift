import ArgumentParser
import Fleet
import Foundation
import Ingest
import ObjectStorage
import Storage

extension DeletionCode: ExpressibleByArgument {}

/// `ingestd delete`: takes published, growing, queued or failed videos down, everywhere ingestd
/// put them (``VideoDeletion``, the one implementation the console and the app's API call too).
struct DeleteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete",
        abstract: "Take videos down: every version, poster and original, with a tombstone and an upload.deleted webhook.",
        discussion: """
        Records a tombstone first (id, when, reason, who), which fences the job: it is never \
        claimed again, a running attempt publishes nothing and stops at its next lease renewal, \
        `retry` refuses it, `reprocess` skips it, a new upload or tus request with its id is \
        refused (410). Then every file or object under CDN/<id>/ goes (every version, pointer, \
        poster, storyboard, preview, MP4; the list is saved first, for the CDN to purge), then \
        the original and the job's files. Last, the signed upload.deleted webhook (id, code, \
        reason, when, the paths and the prefix to purge) is recorded in the outbox, which the \
        daemon or worker that owns the store sends; webhooks still pending for the video are \
        withdrawn (moved to dead: they would name files that are gone). `status --job ID` then \
        says "state": "deleted" with the reason. Killed at any step, the next `delete` of the \
        id, or the upkeep of the daemon or worker that owns the store, finishes it.
        With --reason-code erasure, what the event log and delivered webhooks say of the \
        upload's files goes too; a bucket that keeps versions is reported as not erased.
          ingestd delete --spool /var/spool/ingestd --cdn /srv/cdn --reason-code owner --reason "deleted in the app" clip-1f2e3d4c5b6a7980
          ingestd delete --database postgres://ingestd@db/ingestd --cdn s3://media/cdn --reason-code notice --reason "DMCA #4411" --json id1 id2
        Exit 0: every id deleted; 1: some unknown, or deleted before (the first deletion's \
        reason is shown, unchanged); 75: some still running past --wait (fenced and out of \
        view, completed by the daemon or worker); 73: a removal failed (run it again); 64: \
        bad arguments (nothing is removed); 69: the database cannot be reached. See docs/DELETION.md.
        """
    )

    @Option(help: ArgumentHelp("Spool directory (the videos of `ingestd watch`).", valueName: "dir"))
    var spool: String?

    @OptionGroup var databaseOption: DatabaseOption

    @Option(help: ArgumentHelp("The CDN the videos were published to: the directory or s3://bucket/prefix `watch` or `worker` was given.", valueName: "dir|s3-prefix"))
    var cdn: String

    @OptionGroup var storage: StorageOption

    @Option(help: ArgumentHelp("Why, for metrics and the app: \(DeletionCode.allCases.map(\.rawValue).joined(separator: ", ")). erasure also removes what the records say of the upload's files.", valueName: "code"))
    var reasonCode: DeletionCode

    @Option(help: ArgumentHelp("Why, in words (1 to 1000 characters): kept in the tombstone and sent with the webhook.", valueName: "text"))
    var reason: String

    @Option(help: ArgumentHelp("Seconds to wait for a running attempt to stop before answering (the deletion completes later all the same).", valueName: "seconds"))
    var wait: Double = 30

    @Flag(help: "Print the result as JSON: {\"results\": [{\"id\", \"result\", \"message\", \"tombstone\"}]}.")
    var json = false

    @Argument(help: ArgumentHelp("Job ids.", valueName: "id"))
    var ids: [String]

    func validate() throws {
        guard (spool != nil) != databaseOption.isGiven else {
            throw ValidationError("give --spool DIR or --database URL (or set INGESTD_DATABASE_URL), not both")
        }
        guard !ids.isEmpty, ids.count <= 10_000 else { throw ValidationError("name 1 to 10000 job ids") }
        guard wait >= 0, wait <= 3600 else { throw ValidationError("--wait must be 0 to 3600 seconds") }
        do {
            for id in ids { try DeletionReason.check(id: id) }
            _ = try DeletionReason(code: reasonCode, text: reason, by: "")
        } catch {
            throw ValidationError("\(error); nothing was recorded or removed")
        }
    }

    func run() async throws {
        let reason = try DeletionReason(code: reasonCode, text: reason, by: Self.who)
        let target = try storage.target(cdn: cdn, pointer: spool != nil, json: json)
        let outcomes: [DeletionOutcome]
        let (ids, wait) = (Array(NSOrderedSet(array: ids)) as? [String] ?? ids, Duration.seconds(self.wait))
        if let spool {
            try WorkerOptions.requireRoot("--spool", SpoolLayout(root: spool).root)
            let store = SpoolStore(layout: SpoolLayout(root: spool))
            outcomes = await VideoDeletion(store: store, target: target).delete(ids, reason: reason, wait: wait)
        } else {
            let database = try databaseOption.resolve()
            let logger = Log.make(label: "ingestd.delete")
            do {
                outcomes = try await database.withClient(logger: logger) { client in
                    try await QueueSchema.migrate(client, logger: logger)
                    let store = PostgresStore.producer(JobQueue(client: client, logger: logger, timeout: database.callTimeout))
                    // serve's originals lie in a bucket: the same endpoint and credentials reach them.
                    let inputs = (try? S3Configuration.fromEnvironment(endpoint: storage.endpoint)).map { BucketStorage(client: S3Client(configuration: $0)) }
                    return await VideoDeletion(store: store, target: target, inputs: inputs).delete(ids, reason: reason, wait: wait)
                }
            } catch {
                throw Report.fail(QueueUnavailable(database: database, error: error), json: json)
            }
        }
        try report(outcomes)
    }

    private func report(_ outcomes: [DeletionOutcome]) throws {
        if json {
            print(String(decoding: try JSONEncoder.ingestd.encode(["results": outcomes]), as: UTF8.self))
        } else {
            for outcome in outcomes {
                var line = "\(outcome.result.rawValue.replacingOccurrences(of: "_", with: " "))  \(outcome.id)  \(outcome.message)"
                if outcome.result == .alreadyDeleted, let first = outcome.tombstone {
                    line += " (\(ISO8601DateFormatter().string(from: first.at)), \(first.reason.code.rawValue): \(first.reason.text))"
                }
                if outcome.result == .deleted, let tombstone = outcome.tombstone {
                    line += " (\(tombstone.purge.count) CDN paths to purge, under \(tombstone.purgePrefix))"
                    if let gap = tombstone.erasureIncomplete { line += "; erasure not complete: \(gap)" }
                }
                print(line)
            }
        }
        let results = Set(outcomes.map(\.result))
        if results.contains(.failed) { throw ExitCode(ExitStatus.cannotWrite.rawValue) }
        if results.contains(.pending) { throw ExitCode(75) }  // EX_TEMPFAIL: completes later
        if !results.isSubset(of: [.deleted]) { throw ExitCode(ExitStatus.failure.rawValue) }
    }

    /// `cli:<user>@<host>`: who asked, in the tombstone.
    static var who: String {
        let user = getpwuid(geteuid()).flatMap { String(validatingCString: $0.pointee.pw_name) } ?? "uid\(geteuid())"
        return "cli:\(user)@\(HostName.current)"
    }
}
