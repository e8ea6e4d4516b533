import Fleet
import Ingest

extension FleetUploadStore {
    /// Queues the set's one job, input the prefix `<uploads>/<id>/` (upload.json, clips, sound
    /// track: an upload directory in the bucket), once its `files` files are all complete. The
    /// database decides: the set's rows are locked while the job is queued and the set recorded
    /// as enqueued, so of two hosts finishing the last two files at once exactly one queues it
    /// (the other sees the record); a host killed in between leaves the rows unrecorded and the
    /// next try queues again, which the queue keeps as the one job. Returns whether it is queued.
    func enqueueSet(_ id: String, files: Int) async throws -> Bool {
        let (jobs, submitter) = (jobs, submitter)
        let input = TranscodeJob.Input.path(root.appending("\(id)/").description)
        return try await rows.whileLocked(id) { set in
            if set.contains(where: \.enqueued) { return true }
            guard set.count == files, set.allSatisfy({ $0.completed && !$0.terminated }) else { return false }
            let asked: PlaybackPolicy? = set.contains { $0.playback == .signed } ? .signed : set.compactMap(\.playback).first
            try await submitter.submit([submitter.job(input, id: id, owned: true, playback: asked)], to: jobs)
            return true
        }
    }
}
