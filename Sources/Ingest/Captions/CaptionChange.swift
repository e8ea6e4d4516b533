import Foundation
import Transcode

/// What a store does when a published video's caption tracks change (``CaptionChange`` holds the order).
public protocol CaptionStore: Sendable {
    /// Records that published video `id` now plays as `manifest` says (its manifest as the
    /// store keeps it), with the `captions_changed` event and `webhook` (`upload.captions`, where
    /// the store sends webhooks); false when `id` is not a published video.
    func recordCaptions(_ id: String, manifest: ReadyManifest, webhook: OutboxEvent) async throws -> Bool
}

/// The one change of a published video's caption tracks, whichever door asks (`ingestd
/// captions`): the CDN first (the track's files, then a new version of the master and the
/// manifest: players that loaded the old master keep playing), then the record and the
/// `upload.captions` webhook. Nothing is encoded again.
public struct CaptionChange: Sendable {
    public let store: any CaptionStore & JobStore
    public let target: any OutputTarget

    public init(store: any CaptionStore & JobStore, target: any OutputTarget) {
        self.store = store
        self.target = target
    }

    public enum Outcome: Sendable, Equatable {
        /// Done: the video's tracks now.
        case changed([ReadyManifest.Caption])
        case unknown
        /// Not a published video (its state named): tracks change once it is published.
        case notPublished(JobSnapshot.State)
        /// `remove`: the video has no track in that language.
        case noTrack
    }

    public func apply(_ id: String, _ revision: CaptionRevision) async throws -> Outcome {
        guard UploadManifest.isValidID(id), let job = try await store.job(id) else { return .unknown }
        guard job.state == .published, let place = job.place else { return .notPublished(job.state) }
        guard let manifest = try await target.reviseCaptions(at: place, revision) else { return .noTrack }
        let webhook = UploadEvent.captionsChanged(job: id, place: place, manifest: manifest)
        guard try await store.recordCaptions(id, manifest: manifest, webhook: webhook) else { return .notPublished(job.state) }
        return .changed(manifest.captions ?? [])
    }
}
