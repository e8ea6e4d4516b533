import Foundation
import Transcode

/// The one reading of a job folder, for `status`, the status API and the console alike.
extension SpoolStore {
    public func job(_ id: String) async throws -> JobSnapshot? { Self.job(id, layout: layout) }

    /// Job `id` from the folder it is in (see ``job(_:in:layout:record:)``).
    public static func job(_ id: String, layout: SpoolLayout) -> JobSnapshot? {
        guard UploadManifest.isValidID(id) else { return nil }  // a name the spool could have minted, nothing else
        if let tombstone = JSONFile.read(Tombstone.self, from: layout.tombstone(id)) { return JobSnapshot(deleted: tombstone) }
        var info = stat()
        for folder in [SpoolLayout.State.archive, .queued, .rejected, .failed, .work] where lstat(layout.job(id, in: folder), &info) == 0 {
            return job(id, in: folder, layout: layout, record: JSONFile.read(JobRecord.self, from: "\(layout.job(id, in: folder))/job.json"))
        }
        return nil
    }

    /// What folder `folder` says of job `id` (its `record` read by the caller): `archive/`
    /// published (where it plays, and its manifest), `queued/` handed to the fleet's
    /// queue, `rejected/` or `failed/` with its `reason.json`, `work/` running while locked (with
    /// its progress, and where it plays while it is made) or queued. The one reading of a job
    /// folder, for `status` and the console's lists alike.
    static func job(_ id: String, in folder: SpoolLayout.State, layout: SpoolLayout, record: JobRecord?) -> JobSnapshot {
        let directory = layout.job(id, in: folder)
        switch folder {
        case .archive:
            let place = record?.playbackPlace
            // The version playing now where this host reads it (reprocess may have replaced it), else as published.
            let manifest = place?.readableManifest.flatMap { JSONFile.read(ReadyManifest.self, from: $0) }
                ?? JSONFile.read(ReadyManifest.self, from: "\(directory)/manifest.json")
            var published = JobSnapshot(id: id, state: .published, attempts: (record?.attempts ?? 0) + 1, progress: 100, place: place,
                                        manifest: manifest)
            published.playback = record?.playback ?? manifest?.playback.flatMap(PlaybackPolicy.init(rawValue:))
            return published
        case .queued:
            return JobSnapshot(id: id, state: .queued, attempts: 0)  // handed to the fleet's queue (`status --database` says more)
        case .rejected, .failed:
            let reason = JSONFile.read(Reason.self, from: "\(directory)/reason.json")
            return JobSnapshot(id: id, state: folder == .rejected ? .rejected : .failed, attempts: reason?.attempts ?? 0, reason: reason)
        case .work:
            guard isRunning(directory, record) else { return JobSnapshot(id: id, state: .queued, attempts: record?.attempts ?? 0) }
            let progress = JSONFile.read(JobProgress.self, from: "\(directory)/progress.json")
            var running = JobSnapshot(id: id, state: .running, attempts: (record?.attempts ?? 0) + 1,
                                      progress: JobSnapshot.percent(progress?.fraction ?? 0))
            // Played while it is made: its master is in view already, where the finished video's will be.
            if FileManager.default.fileExists(atPath: playableRecord(layout, id)) {
                running.playable = true
                let shown = JSONFile.read(ShownVideo.self, from: playableRecord(layout, id))
                running.place = shown?.place
                running.playback = shown?.playback
                if let at = shown?.shownAt, let listing = JSONFile.read(JobPlayable.self, from: "\(directory)/playable.json")?.listing {
                    running.aheadSeconds = Margin.seconds(listed: listing.seconds, ended: listing.ended, shownAt: at)
                }
            }
            return running
        }
    }
}
