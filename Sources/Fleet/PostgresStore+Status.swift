import Foundation
import Ingest
import Logging
import PostgresNIO

/// What the store measures for the worker's upkeep and for `status`: jobs by state, the
/// queue's depth, the database's clock.
extension PostgresStore {
    /// A deleted job with its tombstone (one deleted while it was still being uploaded has no row).
    public func job(_ id: String) async throws -> JobSnapshot? {
        try await described {
            let job = try await queue.job(id)
            guard job == nil || job?.state == .deleted, let tombstone = try await queue.tombstone(id) else { return job }
            return JobSnapshot(deleted: tombstone, attempts: job?.attempts ?? 0)
        }
    }

    public func status() async throws -> JobStoreStatus {
        try await described {
            try await queue.client.withConnection(within: queue.timeout) { [logger = queue.logger] connection in
                try await Self.status(connection, logger: logger)
            }
        }
    }

    /// Jobs by state, from one `GROUP BY` over the table.
    public static func status(_ connection: PostgresConnection, logger: Logger) async throws -> JobStoreStatus {
        var status = JobStoreStatus()
        let rows = try await connection.query("SELECT state, count(*)::bigint FROM ingestd_jobs GROUP BY state", logger: logger)
        for try await (state, count) in rows.decode((String, Int64).self) {
            if let state = JobSnapshot.State(rawValue: state) { status[state] = Int(count) }
        }
        return status
    }

    public func depth() async throws -> Int {
        try await described {
            try await queue.client.withConnection(within: queue.timeout) { [logger = queue.logger] connection in
                let rows = try await connection.query("SELECT count(*)::bigint FROM ingestd_jobs WHERE state = 'queued'", logger: logger)
                for try await count in rows.decode(Int64.self) { return Int(count) }
                return 0
            }
        }
    }

    public func clockOffset() async throws -> Double? {
        try await described {
            try await queue.client.withConnection(within: queue.timeout) { [logger = queue.logger] connection in
                try await Self.clockOffset(connection, logger: logger)
            }
        }
    }

    /// The database's clock minus this host's, in seconds: measured with one round trip, against
    /// its midpoint.
    static func clockOffset(_ connection: PostgresConnection, logger: Logger) async throws -> Double? {
        let sent = Date()
        let rows = try await connection.query("SELECT extract(epoch FROM clock_timestamp())::float8", logger: logger)
        for try await database in rows.decode(Double.self) {
            return database - (sent.timeIntervalSince1970 + Date().timeIntervalSince1970) / 2
        }
        return nil
    }
}
