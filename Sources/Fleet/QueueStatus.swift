import Foundation
import Logging
import Ingest
import PostgresNIO

/// A snapshot of the queue for `ingestd status --database`: counts by state and each job.
public struct QueueStatus: Codable, Sendable {
    public struct Job: Codable, Sendable {
        public var id: String
        public var state: String
        public var attempts: Int
        public var input: String
        public var output: String?
        /// `{"code", "message", "attempts"}` for rejected and failed jobs (and the last error of a retried one).
        public var reason: Reason?
        public var worker: String?
        /// 0–100, the running attempt's own (PostgresStore.progress); only while running.
        public var progress: Int?
    }

    /// Jobs by state, in the words every store uses.
    public var states: JobStoreStatus
    public var counts: [String: Int]
    public var jobs: [Job]
    /// The webhook outbox (`ingestd_webhooks`): counts, pending events next due first, then dead ones.
    public var webhooks: OutboxStatus?
    /// What ended and became playable in the last hour (the console's hour window, in total).
    public var lastHour: ActivityTally?

    /// Reads the counts and the `limit` most recently changed jobs.
    public static func read(_ client: PostgresClient, limit: Int, logger: Logger) async throws -> QueueStatus {
        try await client.withConnection(within: .seconds(30)) { try await read($0, limit: limit, logger: logger) }
    }

    private static func read(_ connection: PostgresConnection, limit: Int, logger: Logger) async throws -> QueueStatus {
        let states = try await PostgresStore.status(connection, logger: logger)
        let counts = ["queued": states.queued, "running": states.running, "published": states.published,
                      "rejected": states.rejected, "failed": states.failed]
        var jobs: [Job] = []
        let rows = try await connection.query("""
            SELECT id, state, attempts, input, output, reason::text, worker,
                   -- read through jsonb, so a schema from before the progress column reads as none
                   CASE WHEN state = 'running' AND (to_jsonb(j) ->> 'progress_token')::bigint = token
                        THEN (to_jsonb(j) ->> 'progress')::integer END
              FROM ingestd_jobs j ORDER BY updated_at DESC, id LIMIT \(limit)
            """, logger: logger)
        for try await (id, state, attempts, input, output, reason, worker, progress)
            in rows.decode((String, String, Int, String, String?, String?, String?, Int?).self) {
            let decoded = reason.flatMap { try? JSONDecoder().decode(Reason.self, from: Data($0.utf8)) }
            jobs.append(Job(id: id, state: state, attempts: attempts, input: input, output: output, reason: decoded, worker: worker,
                            progress: progress))
        }
        return QueueStatus(states: states, counts: counts, jobs: jobs, webhooks: try await webhooks(connection, logger: logger))
    }

    private static func webhooks(_ connection: PostgresConnection, logger: Logger) async throws -> OutboxStatus? {
        var exists = false
        for try await present in try await connection.query("SELECT to_regclass('ingestd_webhooks') IS NOT NULL", logger: logger)
            .decode(Bool.self) { exists = present }
        guard exists else { return nil }
        var counts: [String: Int] = [:]
        for try await (state, count) in try await connection.query("SELECT state, count(*)::bigint FROM ingestd_webhooks GROUP BY state",
                                                                logger: logger).decode((String, Int64).self) {
            counts[state] = Int(count)
        }
        var undelivered: [OutboxStatus.Entry] = []
        let rows = try await connection.query("""
            SELECT id, type, attempts, CASE WHEN state = 'pending' THEN next_attempt_at END, last_error FROM ingestd_webhooks
             WHERE state <> 'delivered' ORDER BY state DESC, next_attempt_at LIMIT 20
            """, logger: logger)
        for try await (id, type, attempts, next, error) in rows.decode((String, String, Int, Date?, String?).self) {
            undelivered.append(.init(id: id, type: type, attempts: attempts, nextAttemptAt: next, lastError: error))
        }
        return OutboxStatus(pending: counts["pending"] ?? 0, delivered: counts["delivered"] ?? 0, dead: counts["dead"] ?? 0,
                            undelivered: undelivered)
    }
}
