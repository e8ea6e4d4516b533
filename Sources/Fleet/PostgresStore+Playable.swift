import Ingest

extension PostgresStore {

    /// Shows a growing attempt's video under the job's fence, with its `playable` event and
    /// `upload.playable` webhook in the same transaction (``JobQueue/playable(_:place:event:show:)``).
    /// A transaction that fails once the pointer is written is checked against the row: unless
    /// it was recorded after all, the video is withdrawn, so nothing is shown the row does not say.
    public func playable(_ job: ClaimedJob, output: AttemptOutput, target: any OutputTarget, _ report: JobPlayable) async throws -> Bool {
        let shown = target.place(output)
        do {
            try await described {
                try await queue.playable(job, place: shown, playback: output.playback) { output.playableWebhook(report, place: shown, afterSeconds: $0, at: $1) }
                    show: { try await target.show(output) }
            }
            return true
        } catch is JobQueue.FenceLost {
            return false
        } catch is JobQueue.NotShown {
            return false
        } catch {
            if (try? await queue.isPlayable(job)) != true { try? await target.withdraw(output) }
            throw error
        }
    }
}
