import Ingest
import ObjectStorage
import Transcode

/// ``RemoteStorage`` on an S3 bucket: inputs through ``ObjectInput``, outputs through
/// ``BucketPublisher``.
public struct BucketStorage: RemoteStorage {
    public let client: S3Client

    public init(client: S3Client) { self.client = client }

    public func fetch(_ input: String, into directory: String, limits: Preset.Limits) async throws -> String {
        guard let location = try S3Location(url: input) else { throw IngestError.inputMissing(path: input) }
        return try await ObjectInput(client: client).fetch(location, into: directory, limits: limits)
    }

    public func upload(_ directory: String, to output: String,
                       while stillWanted: @escaping @Sendable () -> Bool) async throws -> (objects: Int, bytes: Int64) {
        guard let location = try S3Location(url: output) else { throw IngestError.cannotWrite(path: output, reason: "not an s3:// prefix") }
        return try await BucketPublisher(client: client).upload(directory, to: location, while: stillWanted)
    }

    public func refusesObject(_ error: any Error) -> Bool {
        guard let error = error as? S3Error else { return false }
        return !error.isTransient
    }
}
