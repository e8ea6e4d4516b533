import Foundation
import Ingest
import PostgresNIO
import Transcode

/// Deletion in the queue (``PostgresStore``'s ``DeletionStore``): the tombstone and the fence
/// are one transaction. The job row goes to `deleted` with its token incremented, so the attempt
/// holding it fails its next fenced write (renewal, show, publish, end) on whichever host it
/// runs; its lease end is kept, and the video's files are removed for good only after it.
extension JobQueue {
    /// Records the tombstone and fences the job; the webhooks still pending for it are withdrawn.
    public func recordDeletion(_ tombstone: Tombstone) async throws -> RecordedDeletion {
        try await client.withTransaction(within: timeout, logger: logger) { [logger] connection in
            try await connection.query("SELECT pg_advisory_xact_lock(4242002, hashtext(\(tombstone.id)))", logger: logger)
            if let earlier = try await Self.tombstone(tombstone.id, on: connection, logger: logger) { return .earlier(earlier) }
            var hasRow = false, leaseUntil: Date?
            for try await (state, lease) in try await connection.query("""
                SELECT state, lease_until FROM ingestd_jobs WHERE id = \(tombstone.id) FOR UPDATE
                """, logger: logger).decode((String, Date?).self) {
                (hasRow, leaseUntil) = (true, state == "running" ? lease : nil)
            }
            if !hasRow {
                // Deleted while it is uploaded: a row in `deleted` stands for it, so that the upload's
                // completion can never queue it (an id already there is left as it is).
                for try await _ in try await connection.query("SELECT 1 FROM ingestd_uploads WHERE id = \(tombstone.id) LIMIT 1", logger: logger) { hasRow = true }
                guard hasRow else { return .unknown }
                try await connection.query("""
                    INSERT INTO ingestd_jobs (id, state, input, preset, finished_at) VALUES (\(tombstone.id), 'deleted', '', '{}', now())
                    """, logger: logger)
            }
            try await connection.query("""
                INSERT INTO ingestd_deletions (id, tombstone, writing_until) VALUES (\(tombstone.id), \(try Self.json(tombstone))::jsonb, \(leaseUntil))
                """, logger: logger)
            let reason = Self.reason(code: tombstone.reason.code.rawValue, message: tombstone.reason.text, attempts: 0)
            try await connection.query("""
                UPDATE ingestd_jobs SET state = 'deleted', token = token + 1, lease_until = NULL, worker = NULL, reason = \(reason)::jsonb,
                       updated_at = now(), finished_at = now()
                 WHERE id = \(tombstone.id)
                """, logger: logger)
            // An upload still being received ends: serve refuses its next request and its upkeep removes its bytes.
            try await connection.query("""
                UPDATE ingestd_uploads SET terminated = true, expires_at = least(expires_at, now()), updated_at = now() WHERE id = \(tombstone.id)
                """, logger: logger)
            try await connection.query("""
                UPDATE ingestd_webhooks SET state = 'dead', last_error = \(Self.withdrawn(tombstone))
                 WHERE job_id = \(tombstone.id) AND state = 'pending'
                """, logger: logger)
            try await event(tombstone.id, "deleted", ["code": tombstone.reason.code.rawValue, "by": tombstone.reason.by], on: connection)
            try await notifyChange(tombstone.id, on: connection)
            return .recorded(tombstone)
        }
    }

    static func withdrawn(_ tombstone: Tombstone) -> String {
        "withdrawn: the video was deleted (\(tombstone.reason.code.rawValue)) before this was delivered"
    }

    /// The tombstone of job `id`, if it was deleted.
    public func tombstone(_ id: String) async throws -> Tombstone? {
        try await client.withConnection(within: timeout) { [logger] connection in try await Self.tombstone(id, on: connection, logger: logger) }
    }

    static func tombstone(_ id: String, on connection: PostgresConnection, logger: Logger) async throws -> Tombstone? {
        for try await text in try await connection.query("SELECT tombstone::text FROM ingestd_deletions WHERE id = \(id)", logger: logger)
            .decode(String.self) {
            return try JSONDecoder.ingestd.decode(Tombstone.self, from: Data(text.utf8))
        }
        return nil
    }

    /// Deletions not completed, those no fenced attempt may still write first (at most 100 a round).
    public func pendingDeletions() async throws -> [Tombstone] {
        try await client.withConnection(within: timeout) { [logger] connection in
            var found: [Tombstone] = []
            for try await text in try await connection.query("""
                SELECT tombstone::text FROM ingestd_deletions WHERE completed_at IS NULL
                 ORDER BY coalesce(writing_until, '-infinity') <= now() DESC, id LIMIT 100
                """, logger: logger).decode(String.self) {
                found.append(try JSONDecoder.ingestd.decode(Tombstone.self, from: Data(text.utf8)))
            }
            return found
        }
    }

    /// The latest `limit` tombstones, latest first.
    public func tombstones(limit: Int) async throws -> [Tombstone] {
        try await client.withConnection(within: timeout) { [logger] connection in
            var found: [Tombstone] = []
            for try await text in try await connection.query("""

                SELECT tombstone::text FROM ingestd_deletions ORDER BY tombstone->>'at' DESC, id DESC LIMIT \(limit)
                """, logger: logger).decode(String.self) {
                found.append(try JSONDecoder.ingestd.decode(Tombstone.self, from: Data(text.utf8)))
            }
            return found
        }
    }

    /// Tombstones by reason code.
    public func deletionCounts() async throws -> [DeletionCode: Int] {
        try await client.withConnection(within: timeout) { [logger] connection in
            var counts: [DeletionCode: Int] = [:]
            for try await (code, count) in try await connection.query("""

                SELECT tombstone->'reason'->>'code', count(*)::bigint FROM ingestd_deletions GROUP BY 1
                """, logger: logger).decode((String, Int64).self) {
                if let code = DeletionCode(rawValue: code) { counts[code] = Int(count) }
            }
            return counts
        }
    }

    /// When the lease of the attempt the deletion fenced out ends, while it has not.
    public func fencedLease(_ id: String) async throws -> Date? {
        try await client.withConnection(within: timeout) { [logger] connection in
            for try await until in try await connection.query("""
                SELECT writing_until FROM ingestd_deletions WHERE id = \(id) AND writing_until > now()
                """, logger: logger).decode(Date.self) { return until }
            return nil
        }
    }

    /// Saves the tombstone as it is now (its purge list, before the files go).
    public func saveTombstone(_ tombstone: Tombstone) async throws {
        try await client.withConnection(within: timeout) { [logger] connection in
            try await connection.query("UPDATE ingestd_deletions SET tombstone = \(try Self.json(tombstone))::jsonb WHERE id = \(tombstone.id)",
                                       logger: logger)
        }
    }

    /// The job's input where ingestd owns it (``NewJob/ownsInput``): an object or prefix `serve`
    /// received, or a spool's `queued/<id>/upload` (`watch --database`).
    public func ownedInput(_ id: String) async throws -> String? {
        try await client.withConnection(within: timeout) { [logger] connection in
            for try await input in try await connection.query("""
                SELECT input FROM ingestd_jobs WHERE id = \(id) AND input_owned AND input <> ''
                """, logger: logger).decode(String.self) { return input }
            return nil
        }
    }

    /// Erasure: the job's events keep only what happened and when; its input, upload id and
    /// manifest go from its row, and the bodies of its webhooks but the deletion's.
    public func eraseRecords(_ id: String) async throws {
        try await client.withTransaction(within: timeout, logger: logger) { [logger] connection in
            try await connection.query("UPDATE ingestd_job_events SET data = '{}' WHERE job_id = \(id) AND event <> 'deleted'", logger: logger)
            try await connection.query("""
                UPDATE ingestd_jobs SET input = '', upload_id = NULL, manifest = NULL, place = NULL, output = NULL WHERE id = \(id)
                """, logger: logger)
            try await connection.query("""
                UPDATE ingestd_webhooks SET body = '{}' WHERE job_id = \(id) AND type <> 'upload.deleted'
                """, logger: logger)
            // The rows stay (serve's upkeep removes their bytes by them); what they say of the files goes.
            try await connection.query("UPDATE ingestd_uploads SET name = '', metadata = NULL WHERE id = \(id)", logger: logger)
        }
    }

    /// Completes the deletion with its `upload.deleted` webhook, in one transaction.
    public func completeDeletion(_ tombstone: Tombstone) async throws {
        try await client.withTransaction(within: timeout, logger: logger) { [logger] connection in
            var open = false
            for try await _ in try await connection.query("""
                SELECT 1 FROM ingestd_deletions WHERE id = \(tombstone.id) AND completed_at IS NULL FOR UPDATE
                """, logger: logger) { open = true }
            guard open else { return }  // another host's upkeep completed it meanwhile
            try await connection.query("""
                UPDATE ingestd_webhooks SET state = 'dead', last_error = \(Self.withdrawn(tombstone))
                 WHERE job_id = \(tombstone.id) AND state = 'pending' AND type <> 'upload.deleted'
                """, logger: logger)
            var hasRow = false
            for try await _ in try await connection.query("SELECT 1 FROM ingestd_jobs WHERE id = \(tombstone.id)", logger: logger) { hasRow = true }
            if hasRow { try await QueueOutbox.insert(tombstone.webhook, job: tombstone.id, on: connection, logger: logger) }
            try await connection.query("""
                UPDATE ingestd_deletions SET tombstone = \(try Self.json(tombstone))::jsonb, completed_at = now() WHERE id = \(tombstone.id)
                """, logger: logger)
            if hasRow { try await event(tombstone.id, "deletion_completed", ["purged": "\(tombstone.purge.count)"], on: connection) }
            try await notifyChange(tombstone.id, on: connection)
        }
    }

    static func json(_ tombstone: Tombstone) throws -> String {
        String(decoding: try JSONEncoder.ingestd.encode(tombstone), as: UTF8.self)
    }
}
