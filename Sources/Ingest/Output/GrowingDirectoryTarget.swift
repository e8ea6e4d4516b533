import Foundation
import Transcode

/// A directory CDN whose videos play while they are made (the default of `watch`): the job
/// process writes its own version `CDN/<id>/t<token>` in place; ``show(_:)`` points
/// `CDN/<id>/master.m3u8` into it once the ladder can be played, and ``publish(_:)`` repoints it
/// at the measured master and adds `manifest.json` (``GrowingVersion``). Earlier attempts and
/// where a video plays are as in ``StagedDirectoryTarget``, which it builds on.
public struct GrowingDirectoryTarget: OutputTarget {
    let staged: StagedDirectoryTarget
    public var root: String { staged.root }
    public var growsInView: Bool { true }
    public var keepsPublishedLadders: Bool { true }

    public init(staged: StagedDirectoryTarget) { self.staged = staged }

    func version(_ attempt: AttemptOutput) -> GrowingVersion {
        GrowingVersion(root: staged.directory(attempt.id), token: attempt.token)
    }

    /// Earlier attempts' leftovers go; `CDN/<id>` is made, since the job process may write only
    /// inside it (its sandbox).
    public func prepare(_ attempt: AttemptOutput) -> Bool {
        if staged.prepare(attempt) { return true }
        try? FileManager.default.createDirectory(atPath: staged.directory(attempt.id), withIntermediateDirectories: false)
        return false
    }

    /// `CDN/<id>/t<token>`, in place.
    public func writeDirectory(_ attempt: AttemptOutput, scratch: String) -> String {
        "\(staged.directory(attempt.id))/\(attempt.version)"
    }

    /// The manifest as `CDN/<id>/manifest.json` will say it (its paths through the version).
    public func staged(_ attempt: inout AttemptOutput, at staging: String?) {
        staged.staged(&attempt, at: staging)
        if !attempt.adopted, let own = try? JSONDecoder().decode(ReadyManifest.self, from: attempt.manifest) {
            attempt.manifest = VersionPointer.manifest(own, version: attempt.version).jsonData()
        }
    }

    public func show(_ attempt: AttemptOutput) async throws -> Bool { try version(attempt).show() }

    public func publish(_ attempt: AttemptOutput) async throws -> PlaybackPlace {
        if let staging = attempt.staging { _ = try version(attempt).publish(staging: staging, adopted: attempt.adopted) }
        return place(attempt)
    }

    public func putsInView(_ attempt: AttemptOutput) -> Bool { staged.putsInView(attempt) }

    public func withdraw(_ attempt: AttemptOutput) async throws { try version(attempt).withdraw() }

    /// The pointer first, then the version.
    public func discard(_ attempt: AttemptOutput) async { version(attempt).discard() }

    public func discardLeftovers(id: String, token: Int64) async { await staged.discardLeftovers(id: id, token: token) }

    public func place(_ attempt: AttemptOutput) -> PlaybackPlace { staged.place(attempt) }

    public func markPlayback(of id: String, _ policy: PlaybackPolicy) async throws { try await staged.markPlayback(of: id, policy) }

    public func publishedPreset(of id: String) async throws -> String? { try await staged.publishedPreset(of: id) }

    public func republish(_ id: String, presetHash: String, encode: VersionEncoder) async -> Republished {
        await staged.republish(id, presetHash: presetHash, encode: encode)
    }

    public func collectRetired(_ id: String) { staged.collectRetired(id) }
}
