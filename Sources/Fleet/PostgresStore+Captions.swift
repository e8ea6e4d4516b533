import Foundation
import Ingest
import PostgresNIO
import Transcode

/// A published video's caption tracks in the queue: its row's manifest, its event and its
/// webhook, one transaction.
extension PostgresStore: CaptionStore {
    public func recordCaptions(_ id: String, manifest: ReadyManifest, webhook: OutboxEvent) async throws -> Bool {
        let json = String(decoding: manifest.jsonData(), as: UTF8.self)
        let languages = (manifest.captions ?? []).map(\.language).joined(separator: ",")
        return try await described {
            try await queue.client.withTransaction(within: queue.timeout, logger: queue.logger) { [logger = queue.logger] connection in
                var changed = false
                for try await _ in try await connection.query("""
                    UPDATE ingestd_jobs SET manifest = \(json)::text::jsonb, updated_at = now()
                    WHERE id = \(id) AND state = 'published' RETURNING 1
                    """, logger: logger) { changed = true }
                guard changed else { return false }
                try await connection.query("""
                    INSERT INTO ingestd_job_events (job_id, event, data)
                    VALUES (\(id), 'captions_changed', jsonb_build_object('languages', string_to_array(\(languages)::text, ',')))
                    """, logger: logger)
                try await QueueOutbox.insert(webhook, job: id, on: connection, logger: logger)
                try await queue.notifyChange(id, on: connection)
                return true
            }
        }
    }
}
