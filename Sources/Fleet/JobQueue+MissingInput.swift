import Foundation
import Ingest
import PostgresNIO

extension JobQueue {
    /// How long a job whose input one host found missing waits for another host to look: the
    /// claim skips it for that host meanwhile; past it, one host's sightings confirm it (a fleet
    /// of one host).
    public static let missingWindow = Duration.seconds(120)

    /// Who has found a job's input missing so far, and for how long (``inputMissing(_:host:window:retryAfter:)``).
    public struct MissingSightings: Sendable {
        /// Hosts that found it missing, first first.
        public var hosts: [String]
        /// Seconds since the first of them did.
        public var seconds: Double
    }

    /// Notes, under the fence, that `host` found the job's input missing, and pushes the job's
    /// next run `retryAfter` away so that another host is likely to try it first. Returns every
    /// sighting so far, or nil when the attempt no longer holds the job.
    public func inputMissing(_ claim: ClaimedJob, host: String, retryAfter: Duration) async throws -> MissingSightings? {
        try await client.withConnection(within: timeout) { [logger] connection in
            let rows = try await connection.query("""
                UPDATE ingestd_jobs
                   SET missing_on = CASE WHEN \(host) = ANY(missing_on) THEN missing_on ELSE missing_on || \(host)::text END,
                       missing_since = coalesce(missing_since, now()),
                       run_at = now() + make_interval(secs => \(retryAfter.seconds)), updated_at = now()
                 WHERE id = \(claim.id) AND token = \(claim.token) AND state = 'running'
                RETURNING missing_on, extract(epoch FROM now() - missing_since)::float8
                """, logger: logger)
            for try await (hosts, seconds) in rows.decode(([String], Double).self) {
                return MissingSightings(hosts: hosts, seconds: seconds)
            }
            return nil
        }
    }
}
