import Foundation

/// What a store does when a published video's policy changes (``PlaybackChange`` holds the order).
public protocol PlaybackStore: Sendable {
    /// Records that published video `id` now plays under `policy`, with its event and `webhook`
    /// (`upload.playback_changed`, where the store sends webhooks); false when `id` is not a
    /// published video (unknown, deleted, not yet published).
    func recordPlayback(_ id: String, _ policy: PlaybackPolicy, webhook: OutboxEvent) async throws -> Bool
}

/// The one change of a published video's playback policy, whichever door asks (`ingestd
/// playback`, the console): the CDN's marker first (the next request follows it), then the
/// record and the `upload.playback_changed` webhook. No byte of the video changes, so nothing is
/// encoded again; made signed, its unsigned paths are named for caches in front to purge.
public struct PlaybackChange: Sendable {
    public let store: any PlaybackStore & JobStore
    public let target: any OutputTarget

    public init(store: any PlaybackStore & JobStore, target: any OutputTarget) {
        self.store = store
        self.target = target
    }

    public enum Outcome: Sendable, Equatable {
        /// Done; `purge`: the paths a cache in front may hold unsigned (empty when made public).
        case changed(purge: [String])
        case unknown
        /// Not a published video (its state named): a video is made with the policy its upload
        /// asks, and changed once published.
        case notPublished(JobSnapshot.State)
    }

    public func set(_ id: String, _ policy: PlaybackPolicy) async throws -> Outcome {
        guard UploadManifest.isValidID(id), let job = try await store.job(id) else { return .unknown }
        guard job.state == .published else { return .notPublished(job.state) }
        try await target.markPlayback(of: id, policy)
        let purge = policy == .signed ? try await target.contents(of: id).filter { !$0.split(separator: "/").contains { $0.hasPrefix(".") } } : []
        let webhook = UploadEvent.playbackChanged(job: id, playback: policy, purge: purge)
        guard try await store.recordPlayback(id, policy, webhook: webhook) else { return .notPublished(job.state) }
        return .changed(purge: purge)
    }
}
