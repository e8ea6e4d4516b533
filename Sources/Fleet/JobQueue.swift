import Foundation
import Ingest
import Logging
import PostgresNIO
import Transcode

/// The job queue in PostgreSQL, the way Oban, River and Graphile Worker do it: a claim takes the
/// oldest due row with `FOR UPDATE SKIP LOCKED` on a partial index; a claimed job holds a lease
/// its worker renews; every claim increments the job's fencing `token`, and every later write of
/// that attempt (heartbeat, publish, result) is conditional on the token, so a worker that lost
/// its lease can change nothing.
public struct JobQueue: Sendable {
    public let client: PostgresClient
    let logger: Logger
    /// How long one call (a claim, a heartbeat, an end's transaction) may take before its
    /// connection is closed and the call fails (``DatabaseTimeout``).
    public let timeout: Duration

    /// The notification channel workers listen on; `submit` and retries notify it.
    public static let channel = "ingestd_jobs"
    /// Notified (with the job's id) whenever a job is published, becomes playable or ends
    /// otherwise: what the console's shared snapshot wakes on besides ``channel``.
    public static let changes = "ingestd_job_changes"

    /// Notifies ``changes`` of job `id`, at the transaction's commit.
    func notifyChange(_ id: String, on connection: PostgresConnection) async throws {
        try await connection.query("SELECT pg_notify(\(Self.changes), \(id))", logger: logger)
    }

    public init(client: PostgresClient, logger: Logger, timeout: Duration = .seconds(15)) {
        self.client = client
        self.logger = logger
        self.timeout = timeout
    }

    // MARK: producers

    /// Queues `jobs` in one transaction (all or none) and wakes idle workers. A job whose id is
    /// already queued is left as it is, so a producer that died after queueing may queue again.
    public func enqueue(_ jobs: [NewJob]) async throws {
        try await client.withTransaction(within: timeout, logger: logger) { [logger] connection in
            var anyNew = false
            for job in jobs {
                let (input, kind) = Self.columns(of: job.input)
                let inserted = try await connection.query("""
                    INSERT INTO ingestd_jobs (id, state, input, input_kind, preset, upload_id, input_owned, playback)
                    VALUES (\(job.id), 'queued', \(input), \(kind), \(job.preset), \(job.uploadID), \(job.ownsInput), \(job.playback?.rawValue))
                    ON CONFLICT (id) DO NOTHING RETURNING 1
                    """, logger: logger)
                var isNew = false
                for try await _ in inserted { isNew = true }
                guard isNew else { continue }
                anyNew = true
                try await connection.query("""
                    INSERT INTO ingestd_job_events (job_id, event, data) VALUES (\(job.id), 'queued', jsonb_build_object('input', \(input)::text))
                    """, logger: logger)
            }
            if anyNew { try await connection.query("SELECT pg_notify(\(Self.channel), '')", logger: logger) }
        }
    }

    /// The row's `input` and `input_kind`: `path`, or `sole_entry_of` a holder directory.
    static func columns(of input: TranscodeJob.Input) -> (String, String) {
        switch input {
        case .path(let path): (path, "path")
        case .soleEntry(let holder): (holder, "sole_entry_of")
        }
    }

    // MARK: workers

    /// Claims the oldest due job for `worker`, leased for `lease`; nil when none is due. One
    /// statement (the claim and its event), so one commit.
    public func claim(worker: String, lease: Duration) async throws -> ClaimedJob? {
        try await client.withConnection(within: timeout) { [logger] connection in
            let rows = try await connection.execute(QueueStatements.Claim(worker: worker, leaseSeconds: lease.seconds), logger: logger)
            for try await (id, token, attempts, input, kind, preset, uploadID, playback) in rows {
                let source: TranscodeJob.Input = kind == "sole_entry_of" ? .soleEntry(of: input) : .path(input)
                return ClaimedJob(id: id, token: token, attempt: attempts, input: source, preset: preset, uploadID: uploadID,
                                  playback: playback.flatMap(PlaybackPolicy.init(rawValue:)))
            }
            return nil
        }
    }

    /// Renews the lease of an attempt; false when the attempt no longer owns the job (its lease
    /// expired and the job was given to another attempt, or it ended).
    public func heartbeat(_ claim: ClaimedJob, lease: Duration) async throws -> Bool {
        try await client.withConnection(within: timeout) { [logger] connection in
            let rows = try await connection.execute(QueueStatements.Heartbeat(leaseSeconds: lease.seconds, id: claim.id, token: claim.token),
                                                    logger: logger)
            for try await _ in rows { return true }
            return false
        }
    }


    /// The running attempt's progress (its own report, 0 before the first) and whether its
    /// video can be played (shown by that attempt), for a row of `ingestd_jobs`: nil and false
    /// for any other state or attempt.
    static let attemptColumns = """
        CASE WHEN state = 'running' THEN CASE WHEN progress_token = token THEN progress ELSE 0 END END,
        coalesce(state = 'running' AND playable_token = token, false)
        """

    /// Why a fenced write did not happen.
    public struct FenceLost: Error, CustomStringConvertible {
        public var id: String
        public var token: Int64
        public var description: String { "\(id): attempt \(token) no longer holds the job (its lease expired)" }
    }

    /// Publishes an attempt's output under its fence: in one transaction, the job row is locked
    /// and checked to still belong to this attempt, `publish` runs (the rename into the CDN) and
    /// says where the video plays, and the job is recorded as published there, with its
    /// `upload.published` webhook (`event`, given that place) when there is one. A stale attempt
    /// gets ``FenceLost`` and `publish` never runs.
    public func publish(_ claim: ClaimedJob, manifest: String, playback: PlaybackPolicy = .public,
                        event: @escaping @Sendable (PlaybackPlace) -> OutboxEvent? = { _ in nil },
                        _ publish: @escaping @Sendable () async throws -> PlaybackPlace) async throws {
        try await client.withTransaction(within: timeout, logger: logger) { [logger] connection in
            // The row stays locked until the commit, so no rescue or claim can slip in before the rename.
            var holds = false
            for try await _ in try await connection.query("""
                SELECT 1 FROM ingestd_jobs WHERE id = \(claim.id) AND token = \(claim.token) AND state = 'running' FOR UPDATE
                """, logger: logger) { holds = true }
            guard holds else { throw FenceLost(id: claim.id, token: claim.token) }
            let place = try await publish()  // a throw rolls it all back: the row stays `running`
            let recorded = try await connection.execute(
                QueueStatements.Publish(output: place.recorded, manifest: manifest, id: claim.id, token: claim.token, place: try Self.json(place),
                                        playback: playback.rawValue),
                logger: logger)
            for try await _ in recorded {}
            if let event = event(place) { try await QueueOutbox.insert(event, job: claim.id, on: connection, logger: logger) }
            try await notifyChange(claim.id, on: connection)
        }
    }

    /// A place as the row keeps it.
    static func json(_ place: PlaybackPlace) throws -> String { String(decoding: try JSONEncoder().encode(place), as: UTF8.self) }

    /// Whether this attempt's publish was recorded (after its transaction failed without saying
    /// whether the COMMIT happened).
    public func isPublished(_ claim: ClaimedJob) async throws -> Bool {
        try await client.withConnection(within: timeout) { [logger] connection in
            let rows = try await connection.query("""
                SELECT 1 FROM ingestd_jobs WHERE id = \(claim.id) AND token = \(claim.token) AND state = 'published'
                """, logger: logger)
            for try await _ in rows { return true }
            return false
        }
    }

    /// Records how an attempt ended without publishing (``JobEnd/rejected``, `failed`,
    /// `retried` or `released`), if it still holds the job; returns the job's new state, or nil
    /// when the fence was lost (nothing written). `webhook` is recorded in the same transaction;
    /// `log`, the job process's last lines, with the end's event.
    @discardableResult
    public func finish(_ claim: ClaimedJob, _ end: JobEnd, event webhook: OutboxEvent? = nil, log: String? = nil) async throws -> String? {
        try await client.withTransaction(within: timeout, logger: logger) { connection in
            try await finish(claim, end, webhook: webhook, log: log, on: connection)
        }
    }

    private func finish(_ claim: ClaimedJob, _ end: JobEnd, webhook: OutboxEvent?, log: String?,
                        on connection: PostgresConnection) async throws -> String? {
        let reason = end.reason.map { Self.reason(code: $0.code, message: $0.message, attempts: $0.attempts) }
        let rows: PostgresRowSequence
        switch end {
        case .rejected, .failed:
            rows = try await connection.query("""
                UPDATE ingestd_jobs SET state = \(end.label), reason = \(reason)::jsonb, lease_until = NULL,
                       updated_at = now(), finished_at = now()
                 WHERE id = \(claim.id) AND token = \(claim.token) AND state = 'running'
                RETURNING state, coalesce(worker, '')
                """, logger: logger)
        case .retried(_, let after):
            rows = try await connection.query("""
                UPDATE ingestd_jobs
                   SET state = 'queued', run_at = now() + make_interval(secs => \(after.seconds)), reason = \(reason)::jsonb,
                       lease_until = NULL, missing_on = '{}', missing_since = NULL, updated_at = now()
                 WHERE id = \(claim.id) AND token = \(claim.token) AND state = 'running'
                RETURNING state, coalesce(worker, '')
                """, logger: logger)
        case .released:
            rows = try await connection.query("""
                UPDATE ingestd_jobs SET state = 'queued', attempts = attempts - 1, run_at = greatest(run_at, now()), lease_until = NULL,
                       worker = NULL, updated_at = now()
                 WHERE id = \(claim.id) AND token = \(claim.token) AND state = 'running'
                RETURNING state, coalesce(worker, '')
                """, logger: logger)
        case .published:
            preconditionFailure("a publish is recorded by publish(_:output:manifest:event:_:)")
        }
        for try await (state, worker) in rows.decode((String, String).self) {
            var data = ["attempt": "\(claim.attempt)"]
            // Who ran it, for the console's per-host charts (a released job's worker is cleared).
            if !worker.isEmpty { data["worker"] = worker }
            if let reason = end.reason { data["code"] = reason.code }
            if let log { data["log"] = log }
            try await event(claim.id, end.label == "retried" ? "retry" : end.label, data, on: connection)
            if let webhook { try await QueueOutbox.insert(webhook, job: claim.id, on: connection, logger: logger) }
            if state == "queued" { try await connection.query("SELECT pg_notify(\(Self.channel), '')", logger: logger) }
            try await notifyChange(claim.id, on: connection)
            return state
        }
        return nil
    }

    /// Appends to the job's event log (`ingestd_job_events`), the queue's `events.ndjson`.
    func event(_ id: String, _ name: String, _ data: [String: String], on connection: PostgresConnection) async throws {
        let json = String(decoding: try JSONSerialization.data(withJSONObject: data, options: [.sortedKeys]), as: UTF8.self)
        try await connection.query("INSERT INTO ingestd_job_events (job_id, event, data) VALUES (\(id), \(name), \(json)::jsonb)",
                                   logger: logger)
    }

    static func reason(code: String, message: String, attempts: Int) -> String {
        let object: [String: Any] = ["code": code, "message": message, "attempts": attempts]
        return String(decoding: (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8), as: UTF8.self)
    }
}
