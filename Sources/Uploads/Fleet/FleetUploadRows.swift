import Fleet
import Foundation
import Ingest
import Logging
import ObjectStorage
import PostgresNIO

/// One fleet upload, a row of `ingestd_uploads`: where its bytes are (the parts of an S3
/// multipart upload, then a tail object) and who writes it.
struct FleetUpload: Codable, Sendable {
    var id: String
    var part: Int
    var length: Int64
    var offset: Int64
    var name: String
    var metadata: String?
    var key: String
    var multipartID: String
    var parts: [S3Client.UploadedPart]
    var tail: Int64
    var tailKey: String?
    var interrupted: Bool
    var terminated: Bool
    var completed: Bool
    var enqueued: Bool
    /// How many uploads make the job: 1 for a lone video file, more for an upload set (``part`` is then the file's index).
    var files: Int
    /// What the link and the phone asked for this file (``UploadSet/playback``'s fleet twin).
    var playback: PlaybackPolicy?

    enum CodingKeys: String, CodingKey {
        case id, part, length, offset = "upload_offset", name, metadata, key, multipartID = "multipart_id", parts, tail,
             tailKey = "tail_key", interrupted, terminated, completed, enqueued, files, playback
    }

    /// As ``TusHandler`` sees it: `path` is the object's key.
    var upload: PartialUpload {
        PartialUpload(id: id, part: part, length: length, offset: offset, name: name, path: key, metadata: metadata, interrupted: interrupted)
    }
}

/// The statements on `ingestd_uploads`, each its own transaction: none is held open while a
/// body streams or the bucket is written.
struct FleetUploadRows: Sendable {
    let client: PostgresClient
    let logger: Logger
    let timeout: Duration

    /// How long a writer holds an upload without renewing (a host killed mid-request frees it after this).
    static let lease = Duration.seconds(15)

    static let row = "row_to_json(ingestd_uploads.*)::text"

    func rows(_ query: PostgresQuery) async throws -> [FleetUpload] {
        try await client.withConnection(within: timeout) { [logger] connection in
            var found: [FleetUpload] = []
            for try await text in try await connection.query(query, logger: logger).decode(String.self) {
                found.append(try JSONDecoder().decode(FleetUpload.self, from: Data(text.utf8)))
            }
            return found
        }
    }

    func changed(_ query: PostgresQuery) async throws -> Bool {
        try await client.withConnection(within: timeout) { [logger] connection in
            for try await _ in try await connection.query(query, logger: logger) { return true }
            return false
        }
    }

    func read(_ id: String, part: Int) async throws -> FleetUpload? {
        try await rows("SELECT \(unescaped: Self.row) FROM ingestd_uploads WHERE id = \(id) AND part = \(part)").first
    }

    /// Takes the upload for `writer` when no live lease holds it; nil when one does (or it is gone).
    func acquire(_ id: String, part: Int, writer: String) async throws -> FleetUpload? {
        try await rows("""
            UPDATE ingestd_uploads SET writer = \(writer), lease_until = now() + make_interval(secs => \(Self.lease.seconds)), updated_at = now()
             WHERE id = \(id) AND part = \(part) AND NOT terminated AND (writer IS NULL OR lease_until < now())
            RETURNING \(unescaped: Self.row)
            """).first
    }

    /// Keeps the lease; false when `writer` lost it.
    func renew(_ id: String, part: Int, writer: String) async throws -> Bool {
        try await changed("""
            UPDATE ingestd_uploads SET lease_until = now() + make_interval(secs => \(Self.lease.seconds))
             WHERE id = \(id) AND part = \(part) AND writer = \(writer) AND NOT terminated RETURNING 1
            """)
    }

    /// Acknowledges what the bucket now holds, if `writer` still holds the upload.
    func record(_ upload: FleetUpload, writer: String) async throws -> Bool {
        let parts = String(decoding: try JSONEncoder().encode(upload.parts), as: UTF8.self)
        return try await changed("""
            UPDATE ingestd_uploads SET upload_offset = \(upload.offset), parts = \(parts)::jsonb, tail = \(upload.tail), tail_key = \(upload.tailKey),
                   interrupted = \(upload.interrupted), lease_until = now() + make_interval(secs => \(Self.lease.seconds)), updated_at = now()
             WHERE id = \(upload.id) AND part = \(upload.part) AND writer = \(writer) AND NOT terminated RETURNING 1
            """)
    }

    func release(_ id: String, part: Int, writer: String) async throws {
        _ = try await changed("""
            UPDATE ingestd_uploads SET writer = NULL, lease_until = NULL WHERE id = \(id) AND part = \(part) AND writer = \(writer) RETURNING 1
            """)
    }

    func markCompleted(_ id: String, part: Int) async throws {
        _ = try await changed("UPDATE ingestd_uploads SET completed = true, updated_at = now() WHERE id = \(id) AND part = \(part) RETURNING 1")
    }

    func markEnqueued(_ id: String) async throws {
        _ = try await changed("UPDATE ingestd_uploads SET enqueued = true, updated_at = now() WHERE id = \(id) RETURNING 1")
    }

    /// Ends the upload, or every file of its set, unless it is a job: a lone file once its last byte
    /// is acknowledged (its completion may be under way on another host), a
    /// set once enqueued. The set's rows are locked in part order, as ``FleetUploadStore/enqueueSet(_:files:)``
    /// locks them, so the two never both win. Returns the rows ended (none: nothing to end).
    func terminate(_ id: String) async throws -> [FleetUpload] {
        try await rows("""
            UPDATE ingestd_uploads SET terminated = true, updated_at = now()
             WHERE (id, part) IN (SELECT id, part FROM ingestd_uploads WHERE id = \(id) ORDER BY part FOR UPDATE)
               AND NOT terminated AND NOT enqueued AND (files > 1 OR upload_offset < length) RETURNING \(unescaped: Self.row)
            """)
    }

    /// Uploads whose token has expired (at most 100), and complete ones not yet enqueued (a set's
    /// files once they all are).
    func due() async throws -> (expired: [FleetUpload], unqueued: [FleetUpload]) {
        let expired = try await rows("SELECT \(unescaped: Self.row) FROM ingestd_uploads WHERE expires_at < now() ORDER BY expires_at LIMIT 100")
        let unqueued = try await rows("""
            SELECT \(unescaped: Self.row) FROM ingestd_uploads
             WHERE upload_offset = length AND NOT enqueued AND NOT terminated AND expires_at >= now()
               AND (NOT completed OR files = (SELECT count(*) FROM ingestd_uploads s WHERE s.id = ingestd_uploads.id AND s.completed)) LIMIT 100
            """)
        return (expired, unqueued)
    }

    /// Removes the row unless a live writer holds it.
    func delete(_ id: String, part: Int) async throws -> Bool {
        try await changed("""
            DELETE FROM ingestd_uploads WHERE id = \(id) AND part = \(part) AND (writer IS NULL OR lease_until < now()) RETURNING 1
            """)
    }
}
