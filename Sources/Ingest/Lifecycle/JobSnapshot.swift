import Foundation
import Transcode

/// What a store says of one job (``JobStore/job(_:)``): the one read behind the status API,
/// `status --json` and the console. States in ``JobEnd``'s words plus the two live ones.
public struct JobSnapshot: Codable, Sendable, Equatable {
    public enum State: String, Codable, Sendable, CaseIterable {
        case queued, running, published, rejected, failed, deleted
    }

    public var id: String
    public var state: State
    /// Attempts made so far (released attempts do not count).
    public var attempts: Int
    /// 0–100 while running: the running attempt's own report (0 before its first).
    public var progress: Int?
    /// Why it was rejected or failed, or why its last attempt failed.
    public var reason: Reason?
    /// Where it plays once published, or while it grows (``playable``), as its target said.
    public var place: PlaybackPlace? { didSet { output = place?.recorded } }
    /// Where it is published: `CDN/<id>`, or in a bucket the version prefix (``PlaybackPlace/recorded``),
    /// for readers of `status --json` from before places.
    public private(set) var output: String?
    /// The published manifest, where the store keeps or can read it.
    public var manifest: ReadyManifest?
    /// True while a running job's video can already be played at `place`'s `master.m3u8`
    /// (played while it is made); nil otherwise.
    public var playable: Bool?
    /// While a shown video grows: how far ahead of its earliest viewer it is (its ``Margin``), in
    /// seconds, where the store knows it.
    public var aheadSeconds: Double?
    /// A deleted video's tombstone: when, why, who, what was purged.
    public var deletion: Tombstone?
    /// Who may play it (absent: public); `signed` names its paths unsigned, as for every video.
    public var playback: PlaybackPolicy?

    public init(id: String, state: State, attempts: Int, progress: Int? = nil, reason: Reason? = nil, place: PlaybackPlace? = nil,
                manifest: ReadyManifest? = nil) {
        self.id = id
        self.state = state
        self.attempts = attempts
        self.progress = progress
        self.reason = reason
        self.place = place
        output = place?.recorded
        self.manifest = manifest
    }

    /// A deleted video, from its tombstone: its reason in ``reason``'s words too.
    public init(deleted tombstone: Tombstone, attempts: Int = 0) {
        self.init(id: tombstone.id, state: .deleted, attempts: attempts,
                  reason: Reason(code: tombstone.reason.code.rawValue, message: tombstone.reason.text, attempts: attempts, at: tombstone.at))
        deletion = tombstone
    }

    /// A progress fraction as a whole percent, clamped to 0–100 (the one clamp).
    public static func percent(_ fraction: Double) -> Int { Int((max(0, min(1, fraction)) * 100).rounded(.down)) }
}
