import Foundation
import Ingest
import PostgresNIO

/// A job as its row says it: the one read behind `status --job`, the status API and the console.
extension JobQueue {
    /// Job `id` from its row: the running attempt's progress only when it is that attempt's
    /// own (0 before its first report), and so is its video being playable (with the output it
    /// plays at) and its margin (``Margin``, on the database's clock); the published manifest as
    /// the row keeps it.
    public func job(_ id: String) async throws -> JobSnapshot? {
        try await client.withConnection(within: timeout) { [logger] connection in
            let rows = try await connection.query("""
                SELECT state, attempts, output, place::text, manifest::text, reason::text, \(unescaped: Self.attemptColumns),
                       CASE WHEN state = 'running' AND playable_token = token AND progress_token = token THEN listed_seconds END,
                       coalesce(listed_ended, false), playable_at, now(), playback
                  FROM ingestd_jobs WHERE id = \(id)
                """, logger: logger)
            for try await (state, attempts, output, place, manifest, reason, progress, playable, listed, ended, shownAt, now, playback)
                in rows.decode((String, Int, String?, String?, String?, String?, Int?, Bool, Double?, Bool, Date?, Date, String?).self) {
                let ahead = listed.flatMap { listed in shownAt.flatMap { Margin.seconds(listed: listed, ended: ended, shownAt: $0, now: now) } }
                guard let state = JobSnapshot.State(rawValue: state) else { return nil }
                func decoded<T: Decodable>(_ text: String?) -> T? { text.flatMap { try? JSONDecoder().decode(T.self, from: Data($0.utf8)) } }
                var job = JobSnapshot(id: id, state: state, attempts: attempts, progress: state == .published ? 100 : progress,
                                      reason: decoded(reason), manifest: decoded(manifest))
                if state == .published || playable {  // a row from before places names its output alone
                    job.place = decoded(place) ?? output.map { PlaybackPlace.recordedBefore(id: id, output: $0) }
                }
                if playable { job.playable = true }
                job.aheadSeconds = ahead
                job.playback = playback.flatMap(PlaybackPolicy.init(rawValue:))
                return job
            }
            return nil
        }
    }
}
