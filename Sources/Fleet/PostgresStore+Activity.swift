import Foundation
import Ingest
import PostgresNIO

/// The console's charts over the queue: the window's events grouped in the database, per bucket
/// and per window, for the fleet and per host (an attempt's events name its worker). One
/// statement; `ingestd_job_events_at` bounds it to the window.
extension PostgresStore {
    public func activity(since: Date, step: Int) async throws -> [ActivityTally] {
        try await described {
            try await queue.client.withConnection(within: queue.timeout) { [logger = queue.logger] connection in
                let rows = try await connection.query("""
                    WITH e AS (
                        SELECT floor(extract(epoch FROM e.at - \(since)::timestamptz) / \(step))::integer AS bucket, e.event,
                               CASE WHEN e.event IN ('claimed', 'published', 'rejected', 'failed', 'playable') THEN
                                   -- An attempt's events name its worker; one written before they did, its claim's.
                                   split_part(coalesce(e.data ->> 'worker',
                                                       (SELECT c.data ->> 'worker' FROM ingestd_job_events c WHERE c.job_id = e.job_id
                                                           AND c.event = 'claimed' AND c.at <= e.at ORDER BY c.at DESC LIMIT 1)), '/', 1)
                               END AS host,
                               CASE WHEN e.event = 'playable' THEN (e.data ->> 'playableAfterSeconds')::float8 END AS after,
                               (e.event IN ('queued', 'retried', 'retry', 'released')
                                OR (e.event = 'lease_lost' AND e.data ->> 'now' = 'queued')) AS entered
                          FROM ingestd_job_events e
                         WHERE e.at >= \(since)::timestamptz
                           AND e.event IN ('queued', 'retried', 'retry', 'released', 'lease_lost', 'claimed', 'published', 'rejected', 'failed', 'playable'))
                    SELECT bucket, host, GROUPING(bucket)::integer, GROUPING(host)::integer,
                           count(*) FILTER (WHERE event = 'published')::integer, count(*) FILTER (WHERE event = 'rejected')::integer,
                           count(*) FILTER (WHERE event = 'failed')::integer, count(*) FILTER (WHERE entered)::integer,
                           count(*) FILTER (WHERE event = 'claimed')::integer, count(after)::integer,
                           percentile_disc(0.5) WITHIN GROUP (ORDER BY after), percentile_disc(0.95) WITHIN GROUP (ORDER BY after)
                      FROM e GROUP BY GROUPING SETS ((bucket), (bucket, host), (host), ())
                    """, logger: logger)
                var tallies: [ActivityTally] = []
                for try await (bucket, host, wholeWindow, allHosts, published, rejected, failed, entered, claimed, playable, p50, p95)
                    in rows.decode((Int?, String?, Int, Int, Int, Int, Int, Int, Int, Int, Double?, Double?).self) {
                    // A per-host group of the queue's own events (no host) is no host's.
                    if allHosts == 0, host == nil { continue }
                    var tally = ActivityTally(bucket: wholeWindow == 1 ? nil : bucket, host: allHosts == 1 ? nil : host)
                    (tally.published, tally.rejected, tally.failed, tally.entered, tally.claimed) = (published, rejected, failed, entered, claimed)
                    (tally.playable, tally.playableP50, tally.playableP95) = (playable, p50, p95)
                    tallies.append(tally)
                }
                return tallies
            }
        }
    }
}
