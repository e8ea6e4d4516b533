import Ingest

extension PostgresStore {
    /// See ``JobQueue/retry(_:states:)``.
    public func retry(_ ids: [String], rejected: Bool) async throws -> [String] {
        guard !ids.isEmpty else { return [] }
        return try await described { try await queue.retry(ids, states: rejected ? ["failed", "rejected"] : ["failed"]) }
    }
}
