import Foundation
import Transcode

/// A published video's caption tracks in the spool: the CDN's manifest is the record (the spool
/// reads it there), so what is kept here is the `captions_changed` event, and the webhook when
/// the spool has an outbox.
extension SpoolStore: CaptionStore {
    public func recordCaptions(_ id: String, manifest: ReadyManifest, webhook: OutboxEvent) async throws -> Bool {
        let path = "\(layout.job(id, in: .archive))/job.json"
        guard UploadManifest.isValidID(id), !layout.isDeleted(id), JSONFile.read(JobRecord.self, from: path) != nil else { return false }
        if FileManager.default.fileExists(atPath: layout.outbox.directory(.pending)) { try layout.outbox.record(webhook) }
        events.append("captions_changed", id, ["languages": (manifest.captions ?? []).map(\.language)])
        return true
    }
}
