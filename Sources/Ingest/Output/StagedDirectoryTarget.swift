import Foundation
import Transcode

/// A directory CDN where nothing is visible before the end (`--hold`): the job process stages
/// beside `CDN/<id>` (in `.<id>.staging-t<token>`) and ``publish(_:)`` renames the staging into
/// place. A video plays at `<id>`.
public struct StagedDirectoryTarget: OutputTarget {
    public let root: String
    /// How long a version replaced by reprocess stays for players that hold it (seconds).
    public let retiredGrace: Double
    /// A version of another codec is added beside the one playing (``DirectoryVersions``).
    public var keepsPublishedLadders: Bool { true }

    public init(root: String, retiredGrace: Double = 600) {
        self.root = root
        self.retiredGrace = retiredGrace
    }

    /// Reprocess's versions by preset, `CDN/<id>/v<hash>`.
    var versions: DirectoryVersions { DirectoryVersions(cdn: root, graceSeconds: retiredGrace) }

    /// `CDN/<id>`.
    func directory(_ id: String) -> String { PlaybackPlace(root: root, id: id).video }

    /// Whether an output is in view at `CDN/<id>` (its manifest comes last).
    func isInView(_ id: String) -> Bool { FileManager.default.fileExists(atPath: "\(directory(id))/manifest.json") }

    /// Removes the stagings and growing versions of earlier attempts (their owners lost the job,
    /// or were killed; no newer attempt can exist while this one holds it), whatever mode they
    /// ran in (a daemon restarted with or without `--hold`).
    public func prepare(_ attempt: AttemptOutput) -> Bool {
        GrowingVersion(root: directory(attempt.id), token: attempt.token).discardEarlier()
        let prefix = StagedDirectory.stagingPrefix(of: attempt.id)
        for name in (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [] where name.hasPrefix(prefix) {
            if let token = AttemptVersion.token(of: name.dropFirst(prefix.count)), token >= attempt.token { continue }
            try? FileManager.default.removeItem(atPath: "\(root)/\(name)")
        }
        return isInView(attempt.id)
    }

    /// `CDN/<id>`: the job process stages beside it.
    public func writeDirectory(_ attempt: AttemptOutput, scratch: String) -> String { directory(attempt.id) }

    public func staged(_ attempt: inout AttemptOutput, at staging: String?) {
        attempt.staging = staging
        attempt.adopted = isInView(attempt.id)
        let sources = attempt.adopted ? [directory(attempt.id)] : [staging].compactMap { $0 }
        attempt.manifest = sources.lazy.compactMap { FileManager.default.contents(atPath: "\($0)/manifest.json") }.first ?? Data("{}".utf8)
    }

    public func publish(_ attempt: AttemptOutput) async throws -> PlaybackPlace {
        if let staging = attempt.staging {
            // A signed video's first version comes into view with its marker, never without.
            if attempt.playback == .signed { try PlaybackMarker(directory: staging).set(.signed) }
            let staged = StagedDirectory(destination: directory(attempt.id), staging: staging)
            if attempt.adopted || isInView(attempt.id) { staged.discard() } else { try staged.publish(synced: true) }  // the job process flushed it
        }
        return place(attempt)
    }

    public func putsInView(_ attempt: AttemptOutput) -> Bool { attempt.staging != nil && !attempt.adopted && !isInView(attempt.id) }

    public func withdraw(_ attempt: AttemptOutput) async throws {
        guard let staging = attempt.staging, !FileManager.default.fileExists(atPath: staging),
              FileManager.default.fileExists(atPath: "\(directory(attempt.id))/manifest.json") else { return }
        try StagedDirectory(destination: directory(attempt.id), staging: staging).withdraw()
    }

    public func discard(_ attempt: AttemptOutput) async {
        if let staging = attempt.staging { try? FileManager.default.removeItem(atPath: staging) }
    }

    /// Its staging, and a growing version of the same token (an attempt of a daemon since
    /// restarted with `--hold`, or rescued from another host).
    public func discardLeftovers(id: String, token: Int64) async {
        GrowingVersion(root: directory(id), token: token).discard()
        try? FileManager.default.removeItem(atPath: "\(root)/\(StagedDirectory.stagingPrefix(of: id))\(AttemptVersion.name(token: token))")
    }

    /// `<id>`, through its pointers.
    public func place(_ attempt: AttemptOutput) -> PlaybackPlace { PlaybackPlace(root: root, id: attempt.id) }

    /// `CDN/<id>/.playback-signed`, where `CDN/<id>` is (before a held video's first publish,
    /// ``publish(_:)`` puts it in the staging).
    public func markPlayback(of id: String, _ policy: PlaybackPolicy) async throws {
        guard FileManager.default.fileExists(atPath: directory(id)) else { return }
        try PlaybackMarker(directory: directory(id)).set(policy)
    }
}
