import Foundation
import Ingest
import Logging
import PostgresNIO

/// The fleet's webhook outbox, `ingestd_webhooks`: events are inserted by ``JobQueue`` in the
/// transaction that ends their job; any worker's sender takes due ones with `SKIP LOCKED` and a
/// reservation, so one event is sent by one sender at a time.
public struct QueueOutbox: OutboxStore {
    let client: PostgresClient
    let logger: Logger
    let timeout: Duration

    public init(client: PostgresClient, logger: Logger, timeout: Duration = .seconds(15)) {
        self.client = client
        self.logger = logger
        self.timeout = timeout
    }

    /// Runs one statement within the deadline; a silent database cannot hold the sender.
    private func run<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection, Logger) async throws -> T) async throws -> T {
        try await client.withConnection(within: timeout) { [logger] in try await body($0, logger) }
    }

    public var watchedDirectory: String? { nil }

    /// See ``PostgresStore/clockOffset(_:logger:)``.
    public func clockOffset() async throws -> Double? {
        try await run { connection, logger in try await PostgresStore.clockOffset(connection, logger: logger) }
    }

    public func due(limit: Int, excluding: Set<String>, reserve: Duration) async throws -> [OutboxEvent] {
        try await run { connection, logger in
            let rows = try await connection.query("""
                UPDATE ingestd_webhooks SET reserved_until = now() + make_interval(secs => \(reserve.seconds))
                 WHERE id IN (SELECT id FROM ingestd_webhooks
                               WHERE state = 'pending' AND next_attempt_at <= now()
                                 AND (reserved_until IS NULL OR reserved_until < now()) AND NOT (id = ANY(\(Array(excluding))))
                               ORDER BY next_attempt_at LIMIT \(limit) FOR UPDATE SKIP LOCKED)
                RETURNING id, type, body, attempts, created_at, next_attempt_at, last_error
                """, logger: logger)
            var events: [OutboxEvent] = []
            for try await (id, type, body, attempts, created, next, error) in rows.decode((String, String, String, Int, Date, Date, String?).self) {
                events.append(OutboxEvent(id: id, type: type, createdAt: created, body: body, attempts: attempts,
                                          nextAttemptAt: next, lastError: error))
            }
            return events
        }
    }

    public func retry(_ event: OutboxEvent) async throws {
        try await run { connection, logger in _ = try await connection.query("""
            UPDATE ingestd_webhooks SET attempts = \(event.attempts), next_attempt_at = \(event.nextAttemptAt),
                   last_error = \(event.lastError), reserved_until = NULL
             WHERE id = \(event.id) AND state = 'pending'
            """, logger: logger) }
    }

    public func prune(deliveredBefore cutoff: Date) async throws -> Int {
        try await run { connection, logger in
            let rows = try await connection.query("""
                WITH gone AS (DELETE FROM ingestd_webhooks WHERE state = 'delivered' AND delivered_at < \(cutoff) RETURNING 1)
                SELECT count(*)::bigint FROM gone
                """, logger: logger)
            for try await count in rows.decode(Int64.self) { return Int(count) }
            return 0
        }
    }

    public func delivered(_ event: OutboxEvent) async throws {
        try await run { connection, logger in _ = try await connection.query("""
            UPDATE ingestd_webhooks SET state = 'delivered', attempts = \(event.attempts), delivered_at = now(), reserved_until = NULL
             WHERE id = \(event.id)
            """, logger: logger) }
    }

    public func dead(_ event: OutboxEvent) async throws {
        try await run { connection, logger in _ = try await connection.query("""
            UPDATE ingestd_webhooks SET state = 'dead', attempts = \(event.attempts), last_error = \(event.lastError), reserved_until = NULL
             WHERE id = \(event.id) AND state = 'pending'
            """, logger: logger) }
    }

    /// Inserts `event` for `job` on `connection` (inside the transaction that ends the job).
    static func insert(_ event: OutboxEvent, job: String, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query("""
            INSERT INTO ingestd_webhooks (id, job_id, type, body, created_at, next_attempt_at)
            VALUES (\(event.id), \(job), \(event.type), \(event.body), \(event.createdAt), \(event.nextAttemptAt))
            ON CONFLICT (id) DO NOTHING
            """, logger: logger)
    }
}
