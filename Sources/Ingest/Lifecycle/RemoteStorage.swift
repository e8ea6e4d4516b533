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
    /// Creates `output`'s pointer, naming `version` (a prefix below it, already uploaded); throws
    /// ``PointerMoved`` when `output` has one already.
    func point(_ output: String, at version: String) async throws
    /// Uploads `directory` under a new version prefix of `output` and switches the pointer to it,
    /// only if the pointer is still `current` (created only if absent when nil); throws
    /// ``PointerMoved`` when another writer changed it meanwhile. Returns the version prefix.
    func publish(_ directory: String, to output: String, replacing current: RemotePointer?) async throws -> String
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
