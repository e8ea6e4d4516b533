import Foundation
import Transcode

/// Inputs and outputs that are not on this host's file system (a bucket: the `Storage` module's
/// `BucketStorage`). The worker asks it to fetch an input into the job's scratch and to upload a
/// finished output; the lifecycle never sees the client behind it, and the media engine's
/// sanitized builds never link it.
public protocol RemoteStorage: Sendable {
    /// Fetches the upload at `input` into `directory` (private scratch) and returns the local
    /// path to transcode. Limits are checked before and while reading.
    func fetch(_ input: String, into directory: String, limits: Preset.Limits) async throws -> String
    /// Checks the upload at `input` against `limits` from the storage's answers alone (only an
    /// upload directory's `upload.json` is read); returns its canonical URL, its name (the
    /// object's, or the prefix's) and the upload's own id (``Upload/declaredID(inManifest:)``).
    func check(_ input: String, limits: Preset.Limits) async throws -> (url: String, name: String, uploadID: String?)
    /// Uploads the output directory to `output`; `stillWanted` is asked before each file.
    func upload(_ directory: String, to output: String,
                while stillWanted: @escaping @Sendable () -> Bool) async throws -> (objects: Int, bytes: Int64)
    /// True when `error` is the storage refusing one object for good (a `403` on it, an archived
    /// object): charged to the job, not the host's fault.
    func refusesObject(_ error: any Error) -> Bool
    /// What `output`'s pointer (`output/current.json`) names now; nil when nothing is published there.
    func pointer(of output: String) async throws -> RemotePointer?
    /// Makes `output`'s pointer (`output/current.json`) name `version` (a prefix below it whose
    /// master is uploaded): creates it, or replaces one naming an earlier attempt's version that
    /// was never finished (no manifest: it died while its video grew). False, with the pointer
    /// left as it is, when it names a finished version (an earlier attempt published it) or a
    /// newer attempt's.
    func show(_ output: String, version: String) async throws -> Bool
    /// Takes a growing `version` out of view: `output`'s pointer goes if it names it, and so do
    /// the version's playlists (a player's next reload gets a 404; the sweeper takes the rest).
    func withdraw(_ output: String, version: String) async throws
    /// A copy of the growing output `directory` (its job process writes it in place) into the
    /// version prefix `version`, kept while it grows; `stillWanted` is asked before each object.
    func mirror(_ directory: String, to version: String, while stillWanted: @escaping @Sendable () -> Bool) throws -> any RemoteMirror
    /// Uploads `directory` under a new version prefix of `output` and switches the pointer to it,
    /// only if the pointer is still `current` (created only if absent when nil); throws
    /// ``PointerMoved`` when another writer changed it meanwhile. Returns the version prefix.
    func publish(_ directory: String, to output: String, replacing current: RemotePointer?) async throws -> String
    /// Makes the empty object at `url` (`present`) or removes it: a marker (signed playback's).
    func setObject(_ url: String, present: Bool) async throws
    /// The object at `url` (`s3://bucket/key`), nil when there is none; throws when it is larger
    /// than `limit` bytes (the console's read-only view of a bucket CDN).
    func read(_ url: String, limit: Int) async throws -> Data?
    /// Deletion: every object under `output/`, relative to it (`current.json`, `t3/master.m3u8`…).
    func objects(under output: String) async throws -> [String]
    /// Deletion: removes every object under `output/`: the pointer first, then the masters, then the rest.
    func removeObjects(under output: String) async throws
    /// Deletion: removes the object at `url` (absent is fine).
    func removeObject(_ url: String) async throws
    /// Erasure: whether the bucket of `output` keeps old versions of what is removed (its
    /// versioning is on or suspended).
    func keepsOldVersions(of output: String) async throws -> Bool
}

/// A growing output directory's copy in a bucket (``RemoteStorage/mirror(_:to:)``).
public protocol RemoteMirror: Sendable {
    /// Sends what is new: every file a media playlist names that was not sent yet, then each
    /// playlist whose text changed (as read before the files were sent, so none names an object
    /// not there yet); with `master`, the version's master last.
    func sync(master: Bool) async throws
    /// Sends the rest once the job process is done: media and images, the ended playlists, then
    /// the master and the manifest, last. Returns the objects and bytes of the whole version.
    func finish() async throws -> (objects: Int, bytes: Int64)
}

/// An output's pointer as read: the version it names and the ETag a replacement must match.
public struct RemotePointer: Sendable, Equatable {
    /// The version prefix (`s3://…/<id>/<version>`).
    public var version: String
    public var etag: String
    /// The preset hash the version's manifest records (nil when unreadable).
    public var presetHash: String?

    public init(version: String, etag: String, presetHash: String?) {
        self.version = version
        self.etag = etag
        self.presetHash = presetHash
    }
}

/// A conditional pointer write lost: another writer created or replaced the pointer since it
/// was read. Nothing was changed.
public struct PointerMoved: Error, CustomStringConvertible, Sendable {
    public var output: String

    public init(output: String) { self.output = output }

    public var description: String { "\(output): its pointer was changed by another writer; left as it is" }
}

/// Paths that name remote storage rather than this host's file system.
public enum RemotePath {
    public static func isRemote(_ path: String) -> Bool { path.hasPrefix("s3://") }
}
