import ArgumentParser
import Fleet
import Foundation
import Ingest

struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show a spool's or the job queue's state: counts, jobs in flight, failures.",
        discussion: """
        Jobs are counted in the same words for both (`states` in --json): queued, running, \
        published, rejected, failed.

        With --spool, reads the spool directory only; works whether or not a daemon is running.
          ingestd status --spool /var/spool/ingestd
          ingestd status --spool /var/spool/ingestd --json | jq .inFlight
        With --database (or INGESTD_DATABASE_URL), reads the PostgreSQL job queue: counts by \
        state (queued, running, published, rejected, failed) and the most recently changed jobs.
          ingestd status --database postgres://ingestd@db/ingestd --json | jq .counts
        With --deleted, the audit trail: the latest deletions (--limit), each with its id, when, \
        reason code and words, who asked (cli:<user>@<host>, console:<token name>, api) and \
        whether it completed.
          ingestd status --spool /var/spool/ingestd --deleted --json
        With --job ID, one job as its store answers for it (both stores the same way: state, \
        attempts, progress, reason; with --database also the published output); exit 66 when \
        the store has no such job.
          ingestd status --spool /var/spool/ingestd --job clip-1f2e3d4c5b6a7980 --json
        """
    )

    @Option(help: ArgumentHelp("Spool directory.", valueName: "dir"))
    var spool: String?

    @OptionGroup var databaseOption: DatabaseOption

    @Option(help: "With --database: how many jobs to list (most recently changed first); with --deleted, how many deletions.")
    var limit: Int = 1000

    @Option(help: ArgumentHelp("One job: what its store says of it.", valueName: "id"))
    var job: String?

    @Flag(help: "List deleted videos (tombstones), latest first, instead.")
    var deleted = false

    @Flag(help: "Print the status as JSON.")
    var json = false

    func validate() throws {
        guard spool != nil || databaseOption.isGiven else {
            throw ValidationError("give --spool DIR or --database URL (or set INGESTD_DATABASE_URL)")
        }
        guard (1...100_000).contains(limit) else { throw ValidationError("--limit must be 1...100000") }
    }

    func run() async throws {
        if let spool, !FileManager.default.fileExists(atPath: spool) {
            FileHandle.standardError.write(Data("ingestd: error: \(spool): no such spool\n".utf8))
            throw ExitCode(ExitStatus.inputMissing.rawValue)
        }
        if let job { return try await jobStatus(job) }
        if deleted { return try await deletedStatus() }
        guard let spool else { return try await queueStatus() }
        var status = SpoolStatus(layout: SpoolLayout(root: spool))
        status.lastHour = try? await SpoolStore(layout: SpoolLayout(root: spool)).lastHour()
        if json {
            print(String(decoding: try JSONEncoder.ingestd.encode(status), as: UTF8.self))
            return
        }
        print(status.states.line)
        status.lastHour.map { print(Self.line($0)) }
        print("in flight: \(status.inFlight.count)")
        for job in status.inFlight {
            let progress = job.progress.map { String(format: "%3d%% %.2fx", JobSnapshot.percent($0.fraction), $0.speed) } ?? "starting"
            print("  \(job.id)  \(progress)  attempt \(job.attempts + 1)  \(job.original)")
        }
        Self.printWebhooks(status.webhooks)
        if !status.recentFailures.isEmpty {
            print("recent failures:")
            for failure in status.recentFailures {
                print("  \(failure.state)/\(failure.id)  \(failure.reason.code): \(failure.reason.message)")
            }
        }
    }

    /// `--job`: the one read every store answers (``JobStore/job(_:)``).
    private func jobStatus(_ id: String) async throws {
        let found: JobSnapshot?
        if let spool {
            found = SpoolStore.job(id, layout: SpoolLayout(root: spool))
        } else {
            let database = try databaseOption.resolve()
            let logger = Log.make(label: "ingestd.status")
            do {
                found = try await database.withClient(logger: logger) { client in
                    try await PostgresStore.producer(JobQueue(client: client, logger: logger, timeout: database.callTimeout)).job(id)
                }
            } catch {
                throw Report.fail(QueueUnavailable(database: database, error: error), json: json)
            }
        }
        guard let found else { throw Report.fail(IngestError.inputMissing(path: "job \(id.debugDescription)"), json: json) }
        if json {
            print(String(decoding: try JSONEncoder.ingestd.encode(found), as: UTF8.self))
            return
        }
        print("\(found.id)  \(found.state.rawValue)  attempts \(found.attempts)" + (found.progress.map { "  \($0)%" } ?? "")
              + (found.output.map { "  \($0)" } ?? "") + (found.reason.map { "  \($0.code): \($0.message)" } ?? ""))
    }

    /// `--deleted`: the tombstones, latest first, from either store.
    private func deletedStatus() async throws {
        let tombstones: [Tombstone]
        if let spool {
            tombstones = try await SpoolStore(layout: SpoolLayout(root: spool)).tombstones(limit: limit)
        } else {
            let database = try databaseOption.resolve()
            let logger = Log.make(label: "ingestd.status")
            let limit = limit
            do {
                tombstones = try await database.withClient(logger: logger) { client in
                    try await PostgresStore.producer(JobQueue(client: client, logger: logger, timeout: database.callTimeout)).tombstones(limit: limit)
                }
            } catch {
                throw Report.fail(QueueUnavailable(database: database, error: error), json: json)
            }
        }
        if json {
            print(String(decoding: try JSONEncoder.ingestd.encode(["deleted": tombstones]), as: UTF8.self))
            return
        }
        print("deleted: \(tombstones.count)\(tombstones.count == limit ? " (the latest; --limit for more)" : "")")
        for tombstone in tombstones {
            print("  \(ISO8601DateFormatter().string(from: tombstone.at))  \(tombstone.id)  \(tombstone.reason.code.rawValue)  by \(tombstone.reason.by)"
                  + (tombstone.completedAt == nil ? "  (completing)" : "") + "  \(tombstone.reason.text)")
        }
    }

    private func queueStatus() async throws {
        let database = try databaseOption.resolve()
        let logger = Log.make(label: "ingestd.status")
        let limit = limit
        let status: QueueStatus
        do {
            status = try await database.withClient(logger: logger) { client in
                var status = try await QueueStatus.read(client, limit: limit, logger: logger)
                status.lastHour = try await PostgresStore.producer(JobQueue(client: client, logger: logger, timeout: database.callTimeout)).lastHour()
                return status
            }
        } catch {
            throw Report.fail(QueueUnavailable(database: database, error: error), json: json)
        }
        if json {
            print(String(decoding: try JSONEncoder.ingestd.encode(status), as: UTF8.self))
            return
        }
        print(status.states.line)
        status.lastHour.map { print(Self.line($0)) }
        for job in status.jobs where job.state != "published" {
            let reason = job.reason.map { "  \($0.code): \($0.message)" } ?? ""
            print("  \(job.state.padding(toLength: 9, withPad: " ", startingAt: 0)) \(job.id)  attempts \(job.attempts)"
                  + "\(job.worker.map { "  on \($0)" } ?? "")\(job.progress.map { "  \($0)%" } ?? "")  \(job.input)\(reason)")
        }
        Self.printWebhooks(status.webhooks)
    }

    /// `last hour: 3 published, 1 rejected, 0 failed; playable p50 1.15 s, p95 1.60 s`.
    static func line(_ hour: ActivityTally) -> String {
        "last hour: \(hour.published) published, \(hour.rejected) rejected, \(hour.failed) failed"
            + (hour.playableP50.map { p50 in String(format: "; playable p50 %.2f s, p95 %.2f s", p50, hour.playableP95 ?? p50) } ?? "")
    }

    private static func printWebhooks(_ webhooks: OutboxStatus?) {
        guard let webhooks else { return }
        print("webhooks: pending \(webhooks.pending), delivered \(webhooks.delivered), dead \(webhooks.dead)")
        for event in webhooks.undelivered {
            let state = event.nextAttemptAt == nil ? "dead" : "pending"
            print("  \(state) \(event.id) \(event.type)  attempts \(event.attempts)\(event.lastError.map { "  last error: \($0)" } ?? "")")
        }
    }
}
