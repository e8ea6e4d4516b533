import Foundation
import Transcode

/// What a store says of one job (``JobStore/job(_:)``): the one read behind the status API,
/// `status --json` and the console. States in ``JobEnd``'s words plus the two live ones.
public struct JobSnapshot: Codable, Sendable, Equatable {
    public enum State: String, Codable, Sendable, CaseIterable {
        case queued, running, published, rejected, failed
    }

    public var id: String
    public var state: State
    /// Attempts made so far (released attempts do not count).
    public var attempts: Int
    /// 0–100 while running: the running attempt's own report (0 before its first).
    public var progress: Int?
    /// Why it was rejected or failed, or why its last attempt failed.
    public var reason: Reason?
    /// Where it is published: `CDN/<id>`, or in a bucket the version its pointer names.
    public var output: String?
    /// The published manifest, where the store keeps or can read it.
    public var manifest: ReadyManifest?
    /// True while a running job's video can already be played at `output`'s `master.m3u8`
    /// (played while it is made); nil otherwise.
    public var playable: Bool?
    /// While a shown video grows: how far ahead of its earliest viewer it is (its ``Margin``), in
    /// seconds, where the store knows it.
    public var aheadSeconds: Double?

    public init(id: String, state: State, attempts: Int, progress: Int? = nil, reason: Reason? = nil, output: String? = nil,
                manifest: ReadyManifest? = nil) {
        self.id = id
        self.state = state
        self.attempts = attempts
        self.progress = progress
        self.reason = reason
        self.output = output
        self.manifest = manifest
    }

    /// Where it plays (``PlaybackPlace``), from `output`.
    public var place: PlaybackPlace? { output.map { PlaybackPlace(id: id, recorded: $0) } }

    /// A progress fraction as a whole percent, clamped to 0–100 (the one clamp).
    public static func percent(_ fraction: Double) -> Int { Int((max(0, min(1, fraction)) * 100).rounded(.down)) }
}
