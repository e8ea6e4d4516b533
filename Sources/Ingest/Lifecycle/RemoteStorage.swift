import Transcode

/// Inputs and outputs that are not on this host's file system (a bucket: the `Storage` module's
/// `BucketStorage`). The worker asks it to fetch an input into the job's scratch and to upload a
/// finished output; the lifecycle never sees the client behind it, and the media engine's
/// sanitized builds never link it.
public protocol RemoteStorage: Sendable {
    /// Fetches the upload at `input` into `directory` (private scratch) and returns the local
    /// path to transcode. Limits are checked before and while reading.
    func fetch(_ input: String, into directory: String, limits: Preset.Limits) async throws -> String
    /// Uploads the output directory to `output`; `stillWanted` is asked before each file.
    func upload(_ directory: String, to output: String,
                while stillWanted: @escaping @Sendable () -> Bool) async throws -> (objects: Int, bytes: Int64)
    /// True when `error` is the storage refusing one object for good (a `403` on it, an archived
    /// object): charged to the job, not the host's fault.
    func refusesObject(_ error: any Error) -> Bool
}

/// Paths that name remote storage rather than this host's file system.
public enum RemotePath {
    public static func isRemote(_ path: String) -> Bool { path.hasPrefix("s3://") }
}
