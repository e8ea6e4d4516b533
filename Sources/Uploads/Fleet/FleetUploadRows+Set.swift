import Fleet
import Foundation
import PostgresNIO

/// The statements that see a token's uploads together: a creation (the next part, under a lock
/// on the id) and a set's completion (its rows locked, in part order).
extension FleetUploadRows {
    /// Every upload the token made so far, by part.
    func set(_ id: String) async throws -> [FleetUpload] {
        try await rows("SELECT \(unescaped: Self.row) FROM ingestd_uploads WHERE id = \(id) ORDER BY part")
    }

    /// Inserts the token's next upload as `make` makes it from the uploads made so far (it throws
    /// to refuse), in one transaction holding a lock on the id: two creations at once, on any
    /// hosts, never take one part number or one name. Refused (409) when a job `id` exists.
    func insertNext(_ id: String, expires: Int64, _ make: @escaping @Sendable ([FleetUpload]) throws -> FleetUpload) async throws -> FleetUpload {
        try await client.withTransaction(within: timeout, logger: logger) { [logger] connection in
            try await connection.query("SELECT pg_advisory_xact_lock(4242031, hashtext(\(id)))", logger: logger)
            let made = try await Self.decode(connection.query("""
                SELECT \(unescaped: Self.row) FROM ingestd_uploads WHERE id = \(id) ORDER BY part
                """, logger: logger))
            let upload = try make(made)
            let inserted = try await connection.query("""
                INSERT INTO ingestd_uploads (id, part, files, length, name, metadata, key, multipart_id, expires_at, playback)
                SELECT \(upload.id), \(upload.part), \(upload.files), \(upload.length), \(upload.name), \(upload.metadata), \(upload.key),
                       \(upload.multipartID), to_timestamp(\(Double(expires))), \(upload.playback?.rawValue)
                 WHERE NOT EXISTS (SELECT 1 FROM ingestd_jobs WHERE id = \(upload.id))
                   AND NOT EXISTS (SELECT 1 FROM ingestd_deletions WHERE id = \(upload.id))
                ON CONFLICT DO NOTHING RETURNING 1
                """, logger: logger)
            for try await _ in inserted { return upload }
            for try await _ in try await connection.query("SELECT 1 FROM ingestd_deletions WHERE id = \(id)", logger: logger) {
                throw TusRefusal(.gone, "deleted", "job \(id) was deleted; a deleted id is never used again")
            }
            throw TusRefusal(.conflict, "token_used", "job \(id) already exists")
        }
    }

    /// Runs `decide` on the set's rows locked `FOR UPDATE` (in part order) in one short
    /// transaction; when it returns true, the whole set is recorded as enqueued before the locks go.
    /// Of two hosts finishing a set's last two files at once, the second waits and sees the first's record.
    func whileLocked(_ id: String, _ decide: @escaping @Sendable ([FleetUpload]) async throws -> Bool) async throws -> Bool {
        try await client.withTransaction(within: timeout, logger: logger) { [logger] connection in
            let set = try await Self.decode(connection.query("""
                SELECT \(unescaped: Self.row) FROM ingestd_uploads WHERE id = \(id) ORDER BY part FOR UPDATE
                """, logger: logger))
            guard try await decide(set) else { return false }
            try await connection.query("UPDATE ingestd_uploads SET enqueued = true, updated_at = now() WHERE id = \(id)", logger: logger)
            return true
        }
    }

    private static func decode(_ rows: PostgresRowSequence) async throws -> [FleetUpload] {
        var found: [FleetUpload] = []
        for try await text in rows.decode(String.self) {
            found.append(try JSONDecoder().decode(FleetUpload.self, from: Data(text.utf8)))
        }
        return found
    }
}
