import Foundation

/// A published video's policy in the spool: its record in `archive/<id>/job.json`, the
/// `playback_changed` event, and the webhook when the spool has an outbox.
extension SpoolStore: PlaybackStore {
    public func recordPlayback(_ id: String, _ policy: PlaybackPolicy, webhook: OutboxEvent) async throws -> Bool {
        let path = "\(layout.job(id, in: .archive))/job.json"
        guard UploadManifest.isValidID(id), !layout.isDeleted(id), var record = JSONFile.read(JobRecord.self, from: path) else { return false }
        record.playback = policy
        try JSONFile.write(record, to: path)
        if FileManager.default.fileExists(atPath: layout.outbox.directory(.pending)) { try layout.outbox.record(webhook) }
        events.append("playback_changed", id, ["playback": policy.rawValue])
        return true
    }
}
