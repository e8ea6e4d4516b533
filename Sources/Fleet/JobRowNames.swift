import Foundation
import ObjectStorage
import PostgresNIO
import Storage

/// The fleet's ``VersionNames``: the job rows (a published row's `output` names its attempt).
/// Only an attempt `t<token>` of a job that exists may go: its token at most the row's, not the
/// attempt running now, not the one the row names. Anything else (not a job's, newer than its
/// row, a stamped version) stays. The rows are read in one statement: one snapshot, so an
/// attempt that publishes meanwhile cannot look neither running nor named.
public struct JobRowNames: VersionNames {
    public let queue: JobQueue

    public init(queue: JobQueue) { self.queue = queue }

    /// A job's row as the sweep needs it.
    struct Row {
        var token: Int64
        var running: Bool
        var output: String?
    }

    public func keeper(of ids: Set<String>, under root: S3Location, cutoff: Date) async throws -> (String, VersionName) -> Bool {
        let rows = try await rows(ids)
        return { id, version in
            guard case .attempt(let token) = version, let row = rows[id] else { return true }
            return token > row.token || (row.running && token == row.token) || row.output == root.appending("\(id)/\(version.name)").description
        }
    }

    private func rows(_ ids: Set<String>) async throws -> [String: Row] {
        guard !ids.isEmpty else { return [:] }
        return try await queue.client.withConnection(within: queue.timeout) { [logger = queue.logger] connection in
            var rows: [String: Row] = [:]
            let list = Array(ids)
            let result = try await connection.query("SELECT id, token, state = 'running', output FROM ingestd_jobs WHERE id = ANY(\(list))", logger: logger)
            for try await (id, token, running, output) in result.decode((String, Int64, Bool, String?).self) {
                rows[id] = Row(token: token, running: running, output: output)
            }
            return rows
        }
    }
}
