import PostgresNIO

extension FleetUploadRows {
    /// A part number for `writer`'s next part, handed out under its lease and never twice: a
    /// writer that lost the upload mid-write can then never overwrite a part another writer
    /// recorded (S3 would keep the stale bytes and refuse the completion for ever). nil when the
    /// lease is gone. Completion lists the recorded parts only; S3 takes gaps in the numbering.
    func nextPart(_ id: String, part: Int, writer: String) async throws -> Int? {
        try await client.withConnection(within: timeout) { [logger] connection in
            let rows = try await connection.query("""
                UPDATE ingestd_uploads SET next_part = next_part + 1
                 WHERE id = \(id) AND part = \(part) AND writer = \(writer) AND NOT terminated AND lease_until > now()
                RETURNING next_part - 1
                """, logger: logger)
            for try await number in rows.decode(Int.self) { return number }
            return nil
        }
    }
}
