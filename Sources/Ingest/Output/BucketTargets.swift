import Foundation

/// A bucket CDN (`s3://…`), uploaded at the end: a bucket has no rename, so the job process
/// writes in the attempt's scratch, the worker uploads it to the attempt's own version prefix
/// `CDN/<id>/t<token>`, and only the store's record of the end names it: the pointer object
/// `CDN/<id>/current.json` (the spool) or the job's row (the fleet). Nothing is written outside
/// the version's prefix but that pointer. A video plays at its version, `<id>/t<token>`.
public struct HeldBucketTarget: OutputTarget {
    public let root: String
    let storage: any RemoteStorage
    /// The pointer object names the published version (else the store's row does).
    let pointer: Bool

    public init(root: String, storage: any RemoteStorage, pointer: Bool) {
        self.root = root
        self.storage = storage
        self.pointer = pointer
    }

    /// The job process's output is uploaded from the scratch's file system.
    public var hostDirectory: String { FileManager.default.temporaryDirectory.path }
    public var writesInScratch: Bool { true }

    /// `CDN/<id>`: the prefix holding the job's versions and pointer.
    func prefix(_ id: String) -> String { PlaybackPlace(root: root, id: id).video }

    /// `CDN/<id>/t<token>`.
    func versionPrefix(_ attempt: AttemptOutput) -> String { place(attempt).recorded }

    public func writeDirectory(_ attempt: AttemptOutput, scratch: String) -> String { "\(scratch)/out" }

    public func staged(_ attempt: inout AttemptOutput, at staging: String?) {
        attempt.staging = staging
        attempt.manifest = staging.flatMap { FileManager.default.contents(atPath: "\($0)/manifest.json") } ?? Data("{}".utf8)
    }

    /// Uploads the staged output under the attempt's version prefix (the rest of a growing
    /// version, with `mirror`).
    public func deliver(_ attempt: AttemptOutput, mirror: (any RemoteMirror)?,
                        while stillWanted: @escaping @Sendable () -> Bool) async throws -> (objects: Int, bytes: Int64)? {
        if let mirror { return try await mirror.finish() }
        guard let staging = attempt.staging else { return nil }
        return try await storage.upload(staging, to: versionPrefix(attempt), while: stillWanted)
    }

    /// Makes the pointer name this attempt's version. One naming a finished version was written
    /// by an earlier attempt that died before the job was filed: it stands, and is what is
    /// published. In the fleet the row names the version: nothing to write.
    public func publish(_ attempt: AttemptOutput) async throws -> PlaybackPlace {
        let own = place(attempt)
        guard pointer else { return own }
        if try await storage.show(prefix(attempt.id), version: own.recorded) { return own }
        guard let named = try await storage.pointer(of: prefix(attempt.id))?.version else { return own }
        return PlaybackPlace(root: root, id: attempt.id, version: String(named.split(separator: "/").last ?? ""))
    }

    public func discard(_ attempt: AttemptOutput) async {
        if let staging = attempt.staging { try? FileManager.default.removeItem(atPath: staging) }
    }

    public func place(_ attempt: AttemptOutput) -> PlaybackPlace { PlaybackPlace(root: root, id: attempt.id, version: attempt.version) }
}

/// A bucket CDN whose version plays as it grows: the job process writes in the scratch, the
/// worker mirrors it into the version prefix as it lands (``RemoteMirror``: segments before
/// playlists, the master last), and ``show(_:)`` names the version in the pointer (the spool;
/// the fleet's row names it). The end is as in ``HeldBucketTarget``, which it builds on.
public struct GrowingBucketTarget: OutputTarget {
    let held: HeldBucketTarget
    public var root: String { held.root }
    public var growsInView: Bool { true }
    public var hostDirectory: String { held.hostDirectory }
    public var writesInScratch: Bool { true }

    public init(held: HeldBucketTarget) { self.held = held }

    public func writeDirectory(_ attempt: AttemptOutput, scratch: String) -> String { held.writeDirectory(attempt, scratch: scratch) }

    public func mirror(_ attempt: AttemptOutput, from directory: String,
                       while stillWanted: @escaping @Sendable () -> Bool) -> (any RemoteMirror)? {
        try? held.storage.mirror(directory, to: held.versionPrefix(attempt), while: stillWanted)
    }

    public func staged(_ attempt: inout AttemptOutput, at staging: String?) { held.staged(&attempt, at: staging) }

    public func deliver(_ attempt: AttemptOutput, mirror: (any RemoteMirror)?,
                        while stillWanted: @escaping @Sendable () -> Bool) async throws -> (objects: Int, bytes: Int64)? {
        try await held.deliver(attempt, mirror: mirror, while: stillWanted)
    }

    /// The pointer names the version from then on (a newer attempt's, or a finished one, stays).
    public func show(_ attempt: AttemptOutput) async throws -> Bool {
        guard held.pointer else { return true }
        return try await held.storage.show(held.prefix(attempt.id), version: held.versionPrefix(attempt))
    }

    public func publish(_ attempt: AttemptOutput) async throws -> PlaybackPlace { try await held.publish(attempt) }

    /// The pointer goes if it names the version, and so do the version's playlists (a
    /// player's next reload gets a 404; the sweeper takes the rest).
    public func withdraw(_ attempt: AttemptOutput) async throws {
        try await held.storage.withdraw(held.prefix(attempt.id), version: held.versionPrefix(attempt))
    }

    public func discard(_ attempt: AttemptOutput) async { await held.discard(attempt) }

    public func discardLeftovers(id: String, token: Int64) async {
        try? await withdraw(AttemptOutput(id: id, token: token))
    }

    public func place(_ attempt: AttemptOutput) -> PlaybackPlace { held.place(attempt) }

    public func publishedPreset(of id: String) async throws -> String? { try await held.publishedPreset(of: id) }

    public func republish(_ id: String, presetHash: String, encode: VersionEncoder) async -> Republished {
        await held.republish(id, presetHash: presetHash, encode: encode)
    }
}
