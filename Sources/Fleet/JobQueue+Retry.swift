import Foundation
import Ingest
import PostgresNIO

extension JobQueue {
    /// An operator's retry, in one statement: each of `ids` still in one of `states` (`failed`,
    /// and `rejected` when asked) is queued again with its attempts reset, its reason cleared and
    /// a `retried` event naming the state it left; idle workers are woken. Returns the ids retried.
    public func retry(_ ids: [String], states: [String]) async throws -> [String] {
        try await client.withTransaction(within: timeout, logger: logger) { [logger] connection in
            let rows = try await connection.query("""
                WITH ended AS (
                    SELECT id, state FROM ingestd_jobs WHERE id = ANY(\(ids)::text[]) AND state = ANY(\(states)::text[]) FOR UPDATE
                ), retried AS (
                    UPDATE ingestd_jobs AS job
                       SET state = 'queued', attempts = 0, run_at = now(), reason = NULL, lease_until = NULL, finished_at = NULL,
                           missing_on = '{}', missing_since = NULL, updated_at = now()
                      FROM ended WHERE job.id = ended.id
                    RETURNING job.id, ended.state AS was
                ), logged AS (
                    INSERT INTO ingestd_job_events (job_id, event, data) SELECT id, 'retried', jsonb_build_object('from', was) FROM retried
                )
                SELECT id FROM retried ORDER BY id
                """, logger: logger)
            var retried: [String] = []
            for try await id in rows.decode(String.self) { retried.append(id) }
            if !retried.isEmpty {
                try await connection.query("SELECT pg_notify(\(Self.channel), '')", logger: logger)
                try await notifyChange("", on: connection)
            }
            return retried
        }
    }
}
