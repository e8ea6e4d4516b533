import Foundation
import Transcode

/// Where attempts' outputs go, and the one place that knows where a video plays: chosen once
/// from `--cdn` and `--hold` (``OutputTargets/make(cdn:growing:storage:pointer:retiredGrace:)``), talked to
/// by the worker (what the job process writes, what is sent) and by the stores, inside their
/// fence (show, publish, withdraw). The stores keep the fence and the record; the target keeps
/// the bytes. One adapter per kind of output:
///
/// - ``StagedDirectoryTarget``: a directory CDN, nothing visible before the end (`--hold`);
/// - ``GrowingDirectoryTarget``: a directory CDN whose videos play while they are made;
/// - ``HeldBucketTarget``: a bucket, uploaded at the end;
/// - ``GrowingBucketTarget``: a bucket whose version is mirrored and played as it grows.
public protocol OutputTarget: Sendable {
    /// The CDN root: a directory, or an `s3://` prefix.
    var root: String { get }
    /// Whether a video is shown while it is made (``show(_:)``).
    var growsInView: Bool { get }
    /// The directory on this host whose space and permissions jobs need: the CDN root, or the
    /// scratch the job process writes a bucket's output in.
    var hostDirectory: String { get }
    /// Whether the job process writes in the attempt's private scratch (``writeDirectory(_:scratch:)``).
    var writesInScratch: Bool { get }
    /// Reprocess: whether a preset that adds codecs keeps the ladder playing now beside them.
    var keepsPublishedLadders: Bool { get }

    /// Readies the attempt's place: what earlier attempts of the job left goes. True when an
    /// earlier attempt already put its output in view (its worker died before recording it):
    /// this attempt adopts it and runs nothing.
    func prepare(_ attempt: AttemptOutput) -> Bool
    /// The directory the job process writes (`scratch`: the attempt's private directory).
    func writeDirectory(_ attempt: AttemptOutput, scratch: String) -> String
    /// The copy of a growing output kept in view while the job process writes `directory`
    /// (a bucket's mirror); nil when the target needs none. `stillWanted` is asked before each object.
    func mirror(_ attempt: AttemptOutput, from directory: String,
                while stillWanted: @escaping @Sendable () -> Bool) -> (any RemoteMirror)?
    /// Takes in what the job process left (`staging`; nil: nothing): its manifest is read here, once.
    func staged(_ attempt: inout AttemptOutput, at staging: String?)
    /// Sends a finished output where the store will name it (a bucket's version prefix) while
    /// `stillWanted`; returns what was sent, nil when the output is in place already.
    func deliver(_ attempt: AttemptOutput, mirror: (any RemoteMirror)?,
                 while stillWanted: @escaping @Sendable () -> Bool) async throws -> (objects: Int, bytes: Int64)?

    /// Shows a growing attempt's video at ``place(_:)``, unless it is published already or a
    /// newer attempt's is shown; called by a store under the job's fence. Whether it is shown.
    func show(_ attempt: AttemptOutput) async throws -> Bool
    /// Puts the output in view; called by a store under the job's fence. An output already in
    /// view (adopted) stays and this attempt's goes. Says where the video plays now: what the
    /// store records.
    func publish(_ attempt: AttemptOutput) async throws -> PlaybackPlace
    /// Whether ``publish(_:)`` is to put this attempt's own output in view (what
    /// ``withdraw(_:)`` undoes): known before the store's transaction, which may fail after it.
    func putsInView(_ attempt: AttemptOutput) -> Bool
    /// Undoes a show or a publish the store knows it did not record: nothing stays in view
    /// that the store does not name.
    func withdraw(_ attempt: AttemptOutput) async throws
    /// Removes what a published attempt left that the store then refused or fenced out.
    func discard(_ attempt: AttemptOutput) async
    /// Removes what attempt `token` of job `id` left, found by name: it ended unpublished, or was
    /// killed and left no result saying where (the rescuer). A newer attempt's stays.
    func discardLeftovers(id: String, token: Int64) async

    /// Signed playback: puts the marker that makes the CDN refuse video `id`'s unsigned paths
    /// (``PlaybackPolicy/markerName``) in place, or takes it away (`public`). A signed attempt's
    /// worker calls it before the job process writes anything; `ingestd playback` after publish.
    func markPlayback(of id: String, _ policy: PlaybackPolicy) async throws

    /// Where the attempt's video plays while it grows, and where it will once published unless
    /// an earlier attempt's output is adopted (``publish(_:)`` says which).
    func place(_ attempt: AttemptOutput) -> PlaybackPlace

    /// Reprocess: the preset hash of the version video `id` plays now; nil when it plays none.
    func publishedPreset(of id: String) async throws -> String?
    /// Reprocess: makes a version of published video `id` with the preset `presetHash`
    /// (`encode` writes it, given the directory and, for a preset that adds codecs, the version
    /// playing now) and puts it in view, unless another writer changed the video meanwhile.
    /// Players holding the version it replaces keep playing it.
    func republish(_ id: String, presetHash: String, encode: VersionEncoder) async -> Republished
    /// Reprocess: removes the versions of `id` retired longer ago than the grace period.
    func collectRetired(_ id: String)

    /// Deletion: every file or object of video `id`, relative to the root: every version,
    /// pointer, poster and leftover of its attempts (what a CDN purges).
    func contents(of id: String) async throws -> [String]
    /// Deletion: removes everything of video `id`, what names its version first, so a player's
    /// next request gets a 404.
    func remove(_ id: String) async throws
    /// Erasure: why the CDN still keeps the bytes removed (a versioned bucket), or nil.
    func oldBytesKept() async throws -> String?

    /// Captions: applies `revision` to the version a published video plays at `place` (a
    /// directory's, then its pointers; a bucket's version prefix, its masters and manifest
    /// last). Returns the manifest as the store keeps it (paths from `place`'s base); nil when
    /// there is no such track to remove.
    func reviseCaptions(at place: PlaybackPlace, _ revision: CaptionRevision) async throws -> ReadyManifest?
}

/// What an adapter does not do, done once: nothing to adopt, mirror, send, show or undo.
extension OutputTarget {
    public var growsInView: Bool { false }
    public var hostDirectory: String { root }
    public var writesInScratch: Bool { false }
    public var keepsPublishedLadders: Bool { false }
    public func prepare(_ attempt: AttemptOutput) -> Bool { false }
    public func mirror(_ attempt: AttemptOutput, from directory: String,
                       while stillWanted: @escaping @Sendable () -> Bool) -> (any RemoteMirror)? { nil }
    public func deliver(_ attempt: AttemptOutput, mirror: (any RemoteMirror)?,
                        while stillWanted: @escaping @Sendable () -> Bool) async throws -> (objects: Int, bytes: Int64)? { nil }
    public func show(_ attempt: AttemptOutput) async throws -> Bool { false }
    public func putsInView(_ attempt: AttemptOutput) -> Bool { false }
    public func withdraw(_ attempt: AttemptOutput) async throws {}
    public func discardLeftovers(id: String, token: Int64) async {}
    public func collectRetired(_ id: String) {}
    public func oldBytesKept() async throws -> String? { nil }
}

/// Writes a video's new version into `directory`; `published`: the version playing now, which
/// a preset adding codecs keeps and adds to (nil when there is none, or it keeps nothing);
/// `playing`: the version players get now, on this host, whatever made it (its caption tracks
/// are kept), nil when there is none here.
public typealias VersionEncoder = @Sendable (_ directory: String, _ published: String?, _ playing: String?) async -> JobOutcome

/// How ``OutputTarget/republish(_:presetHash:encode:)`` ended.
public enum Republished: Sendable, Equatable {
    /// In view: `version` (a directory, or a bucket's version prefix) is what the video plays.
    case published(version: String)
    /// Nothing done: another writer published the same preset meanwhile.
    case skipped(why: String, version: String)
    case failed(String)
    case interrupted
}

/// Chooses the target, once.
public enum OutputTargets {
    /// `cdn`: a directory or an `s3://` prefix (then `storage` reaches it); `growing`: videos
    /// play while they are made (false: `--hold`); `pointer`: in a bucket, the object
    /// `<id>/current.json` names the published version (the spool), else the store's row does
    /// (the fleet); `retiredGrace`: how long a directory's version replaced by reprocess stays.
    public static func make(cdn: String, growing: Bool, storage: (any RemoteStorage)?, pointer: Bool,
                            retiredGrace: Double = 600) -> any OutputTarget {
        if RemotePath.isRemote(cdn), let storage {
            let held = HeldBucketTarget(root: cdn, storage: storage, pointer: pointer)
            return growing ? GrowingBucketTarget(held: held) : held
        }
        let staged = StagedDirectoryTarget(root: cdn, retiredGrace: retiredGrace)
        return growing ? GrowingDirectoryTarget(staged: staged) : staged
    }
}
