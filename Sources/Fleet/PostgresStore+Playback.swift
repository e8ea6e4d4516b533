import Foundation
import Ingest
import PostgresNIO

/// A published video's policy in the queue: its row, its event and its webhook, one transaction.
extension PostgresStore: PlaybackStore {
    public func recordPlayback(_ id: String, _ policy: PlaybackPolicy, webhook: OutboxEvent) async throws -> Bool {
        try await described {
            try await queue.client.withTransaction(within: queue.timeout, logger: queue.logger) { [logger = queue.logger] connection in
                var changed = false
                for try await _ in try await connection.query("""
                    UPDATE ingestd_jobs SET playback = \(policy.rawValue), updated_at = now() WHERE id = \(id) AND state = 'published' RETURNING 1
                    """, logger: logger) { changed = true }
                guard changed else { return false }
                try await connection.query("""
                    INSERT INTO ingestd_job_events (job_id, event, data) VALUES (\(id), 'playback_changed', jsonb_build_object('playback', \(policy.rawValue)::text))
                    """, logger: logger)
                try await QueueOutbox.insert(webhook, job: id, on: connection, logger: logger)
                try await queue.notifyChange(id, on: connection)
                return true
            }
        }
    }
}
