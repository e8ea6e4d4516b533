import Foundation
import Ingest
import Logging
import PostgresNIO

/// The queue's upkeep: expired leases rescued, old job events pruned.
extension JobQueue {
    /// Puts jobs whose lease ran out back in the queue (or fails them once they used up
    /// `maxAttempts`). Rows another transaction holds are skipped. Returns the attempts whose lease ran out.
    /// With `webhooks`, a job failed this way gets its `upload.failed` event in the same statement.
    public func rescueExpiredLeases(maxAttempts: Int, webhooks: Bool = false) async throws -> [ExpiredAttempt] {
        let reason = #"{"code": "lease_expired", "message": "the worker stopped renewing its lease (died, froze or lost the database)"}"#
        // The event body is built here in SQL (the rows are only known inside the statement); it
        // has the shape of ``UploadEvent/refused(_:job:uploadID:code:message:attempts:at:)``.
        return try await client.withTransaction(within: timeout, logger: logger) { [logger] connection in
            let rows = try await connection.query("""
                WITH rescued AS (
                    UPDATE ingestd_jobs
                       SET state = CASE WHEN attempts >= \(maxAttempts) THEN 'failed' ELSE 'queued' END,
                           reason = CASE WHEN attempts >= \(maxAttempts) THEN \(reason)::jsonb ELSE reason END,
                           finished_at = CASE WHEN attempts >= \(maxAttempts) THEN now() END,
                           run_at = now(), lease_until = NULL, updated_at = now()
                     WHERE id IN (SELECT id FROM ingestd_jobs WHERE state = 'running' AND lease_until < now()
                                   LIMIT 100 FOR UPDATE SKIP LOCKED)
                    RETURNING id, token, state, attempts, reason, upload_id
                ), hooks AS (
                    INSERT INTO ingestd_webhooks (id, job_id, type, body)
                    SELECT 'msg_' || id || '_failed', id, 'upload.failed',
                           jsonb_build_object('type', 'upload.failed',
                                              'timestamp', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
                                              'data', jsonb_build_object('id', id, 'attempts', attempts,
                                                                         'reason', reason - 'attempts')
                                                      || CASE WHEN upload_id IS NULL THEN '{}'::jsonb
                                                              ELSE jsonb_build_object('uploadId', upload_id) END)::text
                      FROM rescued WHERE state = 'failed' AND \(webhooks)
                    ON CONFLICT (id) DO NOTHING
                )
                SELECT id, token, state FROM rescued
                """, logger: logger)
            var rescued: [ExpiredAttempt] = []
            for try await (id, token, state) in rows.decode((String, Int64, String).self) {
                rescued.append(ExpiredAttempt(id: id, token: token))
                try await event(id, "lease_lost", ["now": state], on: connection)
            }
            if !rescued.isEmpty {
                try await connection.query("SELECT pg_notify(\(Self.channel), '')", logger: logger)
                try await notifyChange("", on: connection)
            }
            return rescued
        }
    }

    /// Drops job events older than `age` (at most 10,000 per call); returns how many.
    public func pruneEvents(olderThan age: Duration) async throws -> Int {
        try await client.withConnection(within: timeout) { [logger] connection in
            let rows = try await connection.query("""
                WITH gone AS (DELETE FROM ingestd_job_events WHERE ctid IN (
                    SELECT ctid FROM ingestd_job_events WHERE at < now() - make_interval(secs => \(age.seconds)) LIMIT 10000) RETURNING 1)
                SELECT count(*)::bigint FROM gone
                """, logger: logger)
            for try await count in rows.decode(Int64.self) { return Int(count) }
            return 0
        }
    }
}
