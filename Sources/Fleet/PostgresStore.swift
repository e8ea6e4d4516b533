import Foundation
import Ingest
import Logging
import PostgresNIO
import Synchronization

/// The fleet's jobs in PostgreSQL (see ``JobQueue``): claims with `FOR UPDATE SKIP LOCKED`,
/// leases renewed by the worker and rescued once expired, ends recorded in one transaction with
/// their event and webhook, new work announced by `NOTIFY`.
public struct PostgresStore: JobStore {
    public let queue: JobQueue
    /// When this worker last pruned old job events (hourly, with the lease rescue).
    private let pruning = Hourly()
    /// The percent last written for each attempt in flight on this worker.
    private let reported = ReportedProgress()
    /// How long job events are kept: 30 days.
    public static let keepEvents = Duration.seconds(30 * 86_400)
    /// This worker's name in the job rows (`host/pid`).
    let worker: String
    /// When this store was made: the worker's start, in its heartbeat.
    let startedAt = Date()
    let lease: Duration
    /// For the rescue: a job whose lease ran out on its last attempt is failed.
    let maxAttempts: Int
    /// Whether the rescue records `upload.failed` webhooks (give every worker the same setting).
    let webhooks: Bool

    /// Asked first by ``prepare()``, for the server's own reason when it cannot be used.
    let database: DatabaseURL?

    public init(queue: JobQueue, database: DatabaseURL? = nil, worker: String = Self.defaultWorkerName, lease: Duration, maxAttempts: Int,
                webhooks: Bool) {
        self.queue = queue
        self.database = database
        self.worker = worker
        self.lease = lease
        self.maxAttempts = maxAttempts
        self.webhooks = webhooks
    }

    /// The store as a producer sees it (`submit`, `serve`): it queues jobs and reads them, and
    /// never claims one (no lease, no attempts of its own).
    public static func producer(_ queue: JobQueue) -> PostgresStore {
        PostgresStore(queue: queue, lease: .seconds(60), maxAttempts: 1, webhooks: false)
    }

    public static var defaultWorkerName: String { "\(HostName.current)/\(getpid())" }

    public func prepare() async throws {
        try await described {
            if let database {
                // A refused login or a missing database says so (and stops the worker) here.
                let probed: Void? = try await withinDeadline(queue.timeout) { [logger = queue.logger] in try await database.probe(logger: logger) }
                if probed == nil { throw DatabaseTimeout(seconds: queue.timeout.seconds) }
            }
            try await queue.client.ready(tries: 1)  // the worker retries with its backoff
            try await QueueSchema.migrate(queue.client, logger: queue.logger)
        }
    }

    /// Waits on LISTEN, reconnecting with backoff when the connection drops.
    public func listen(_ wake: @escaping @Sendable () -> Void) async { await listen(on: JobQueue.channel, wake) }

    /// Calls `wake` on each notification of `channel` (and once each time it starts listening),
    /// reconnecting after a failure, until cancelled.
    func listen(on channel: String, _ wake: @escaping @Sendable () -> Void) async {
        var delay = Duration.milliseconds(200)
        while !Task.isCancelled {
            do {
                try await queue.client.withConnection { connection in
                    try await connection.listen(on: channel) { notifications in
                        delay = .milliseconds(200)
                        wake()  // catch up with anything queued while not listening
                        for try await _ in notifications { wake() }
                    }
                }
            } catch {
                if Task.isCancelled { return }
                queue.logger.debug("listen failed; reconnecting", metadata: ["error": "\(describeDatabaseError(error))", "in": "\(delay)"])
            }
            try? await SteadyTimer.sleep(for: delay)
            delay = min(delay * 2, .seconds(10))
        }
    }

    public func claim(limit: Int) async throws -> [ClaimedJob] {
        try await described {
            var claimed: [ClaimedJob] = []
            while claimed.count < limit {
                do {
                    guard let job = try await queue.claim(worker: worker, lease: lease) else { break }
                    claimed.append(job)
                } catch where !claimed.isEmpty {
                    break  // what is claimed is run; the next claim retries the rest
                }
            }
            return claimed
        }
    }

    public func enqueue(_ jobs: [NewJob]) async throws {
        try await described { try await queue.enqueue(jobs) }
    }

    public func renew(_ job: ClaimedJob) async throws -> Bool {
        try await described { try await queue.heartbeat(job, lease: lease) }
    }

    /// A publish whose transaction fails after the rename (its COMMIT refused or unanswered) is
    /// checked against the row: unless the end was recorded after all, the output is withdrawn
    /// (``OutputTarget/withdraw(_:)``), so the CDN never shows a job the database does not call
    /// published. When the row cannot be read either, the output stays, and the job's next
    /// attempt adopts it.
    public func finish(_ job: ClaimedJob, _ end: JobEnd, output: AttemptOutput, target: any OutputTarget) async throws -> Bool {
        do {
            return try await described {
                reported.forget(job)
                guard case .published = end else {
                    return try await queue.finish(job, end, event: output.webhook(end, place: target.place(output)), log: output.log) != nil
                }
                // The row names where it plays, as the target says once it published, under the
                // fence in the same transaction that records the end.
                // Known before the transaction: a publish may throw after its rename (the directory's fsync).
                let renames = target.putsInView(output)
                do {
                    try await queue.publish(job, manifest: String(decoding: output.manifest, as: UTF8.self), playback: output.playback,
                                            event: { output.webhook(end, place: $0) }) {
                        let place = try await target.publish(output)
                        try await output.whilePublishing?()
                        return place
                    }
                } catch let error where !(error is JobQueue.FenceLost) {
                    guard renames else { throw error }
                    if try await queue.isPublished(job) { return true }
                    try await target.withdraw(output)
                    throw error
                }
                return true
            }
        } catch is JobQueue.FenceLost {
            return false
        }
    }

    /// Confirmed once two hosts found the input missing, or one did again after
    /// ``JobQueue/missingWindow`` (for which its claims skip the job: a fleet of one host, or no
    /// other host took it); until then the job is not due again for ``missingRetry``.
    public func inputMissing(_ job: ClaimedJob, host: String) async throws -> MissingInput {
        let sightings = try await described { try await queue.inputMissing(job, host: host, retryAfter: Self.missingRetry) }
        guard let sightings else { throw JobQueue.FenceLost(id: job.id, token: job.token) }
        if sightings.hosts.count >= 2 {
            return .confirmed(note: "missing on \(sightings.hosts.joined(separator: " and "))")
        }
        if sightings.seconds >= JobQueue.missingWindow.seconds {
            return .confirmed(note: "missing on \(sightings.hosts.joined(separator: " and ")) for \(Int(sightings.seconds)) s")
        }
        return .unconfirmed
    }

    static let missingRetry = Duration.seconds(5)

    /// Writes the attempt's percent and its shown video's listing to its row under the fence,
    /// only when either changed; best effort: bounded by the queue's timeout, a failure is
    /// dropped (and retried at the next report), never the job's.
    public func progress(_ job: ClaimedJob, _ progress: JobProgress) async {
        let percent = JobSnapshot.percent(progress.fraction)
        guard reported.changes(job, to: .init(percent: percent, listing: progress.listing)) else { return }
        let written = try? await queue.client.withConnection(within: queue.timeout) { [logger = queue.logger] connection in
            let rows = try await connection.query("""
                UPDATE ingestd_jobs SET progress = \(percent), progress_token = token, progress_at = now(),
                       listed_seconds = \(progress.listing?.seconds), listed_ended = \(progress.listing?.ended)
                 WHERE id = \(job.id) AND token = \(job.token) AND state = 'running'
                """, logger: logger)
            for try await _ in rows {}
            return true
        }
        if written == nil { reported.forget(job) }
    }

    public func abandon(_ job: ClaimedJob) async { reported.forget(job) }

    public func rescue(now: Date) async throws -> [ExpiredAttempt] {
        let rescued = try await described { try await queue.rescueExpiredLeases(maxAttempts: maxAttempts, webhooks: webhooks) }
        if pruning.isDue() { _ = try? await queue.pruneEvents(olderThan: Self.keepEvents) }
        return rescued
    }

    /// Runs `body`, turning a database error into a one-line ``QueueError`` (fence losses pass).
    @discardableResult
    func described<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let lost as JobQueue.FenceLost {
            throw lost
        } catch let notShown as JobQueue.NotShown {
            throw notShown
        } catch let error as QueueError {
            throw error
        } catch {
            var state = (error as? PSQLError)?.serverInfo?[.sqlState] ?? ""
            if let transaction = error as? PostgresTransactionError,
               let inner = (transaction.commitError ?? transaction.closureError) as? PSQLError {
                state = inner.serverInfo?[.sqlState] ?? ""
            }
            throw QueueError(description: describeDatabaseError(error), isPermanent: ["22", "23", "42"].contains(String(state.prefix(2))),
                             isConfiguration: state.hasPrefix("28") || state == "3D000" || state == "42501")
        }
    }
}

/// True at the first ask and then once an hour.
private final class Hourly: Sendable {
    private let last = Mutex<ContinuousClock.Instant?>(nil)

    func isDue() -> Bool {
        last.withLock { last in
            guard last.map({ ContinuousClock.now - $0 >= .seconds(3600) }) ?? true else { return false }
            last = .now
            return true
        }
    }
}

/// The percent last written per attempt (`id`, token), so an unchanged one is not written again.
private final class ReportedProgress: Sendable {
    struct Report: Equatable {
        var percent: Int
        var listing: Margin.Listing?
    }

    private let reports = Mutex<[String: Report]>([:])

    /// Whether `report` differs from the one last noted for the attempt; notes it.
    func changes(_ job: ClaimedJob, to report: Report) -> Bool {
        reports.withLock { reports in
            let key = "\(job.id)/\(job.token)"
            guard reports[key] != report else { return false }
            if reports.count >= 10_000 { reports.removeAll() }  // attempts never finished here (a lost lease)
            reports[key] = report
            return true
        }
    }

    func forget(_ job: ClaimedJob) {
        _ = reports.withLock { $0.removeValue(forKey: "\(job.id)/\(job.token)") }
    }
}
