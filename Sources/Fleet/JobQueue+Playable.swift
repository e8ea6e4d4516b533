import Foundation
import Ingest
import PostgresNIO

/// A running attempt's video shown while it is made (``PostgresStore/playable(_:output:_:)``).
extension JobQueue {
    /// Why a playable transaction rolled back: the output could not be shown (the video is
    /// published already, or a newer attempt's is shown).
    public struct NotShown: Error {}

    /// Shows an attempt's growing output under its fence: in one transaction, the job row is
    /// locked and checked to still belong to this attempt and marked playable at `place`, the
    /// `upload.playable` webhook (`event`, given the seconds since the job was queued and the
    /// database's time, which it is stamped with) is
    /// recorded, and `show` runs last (the pointer's rename). A stale attempt gets
    /// ``FenceLost`` and `show` never runs; `show` answering false rolls it all back
    /// (``NotShown``).
    public func playable(_ claim: ClaimedJob, place: PlaybackPlace, playback: PlaybackPolicy = .public,
                         event: @escaping @Sendable (_ afterSeconds: Double, _ at: Date) -> OutboxEvent?,
                         show: @escaping @Sendable () async throws -> Bool) async throws {
        try await client.withTransaction(within: timeout, logger: logger) { [logger] connection in
            let rows = try await connection.execute(QueueStatements.Playable(output: place.recorded, id: claim.id, token: claim.token, place: try Self.json(place),
                                                                                    playback: playback.rawValue), logger: logger)
            var shown: (after: Double, at: Double)?
            for try await row in rows { shown = row }
            guard let shown else { throw FenceLost(id: claim.id, token: claim.token) }
            if let event = event(shown.after, Date(timeIntervalSince1970: shown.at)) { try await QueueOutbox.insert(event, job: claim.id, on: connection, logger: logger) }
            try await notifyChange(claim.id, on: connection)
            guard try await show() else { throw NotShown() }
        }
    }

    /// Whether this attempt's video is recorded as playable (after its transaction failed
    /// without saying whether the COMMIT happened).
    public func isPlayable(_ claim: ClaimedJob) async throws -> Bool {
        try await client.withConnection(within: timeout) { [logger] connection in
            let rows = try await connection.query("""
                SELECT 1 FROM ingestd_jobs WHERE id = \(claim.id) AND token = \(claim.token) AND playable_token = token
                """, logger: logger)
            for try await _ in rows { return true }
            return false
        }
    }
}
