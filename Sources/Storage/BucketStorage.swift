import Foundation
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

    public func check(_ input: String, limits: Preset.Limits) async throws -> (url: String, name: String, uploadID: String?) {
        guard let location = try S3Location(url: input) else { throw IngestError.inputMissing(path: input) }
        guard case .directory(let prefix, _) = try await ObjectInput(client: client).check(location, limits: limits) else {
            return (location.description, location.name, nil)
        }
        // Its size was checked against the manifest limit by the listing.
        let manifest = try await client.read(S3Location(bucket: location.bucket, key: prefix + Upload.manifestName))
        return (location.description, location.name, manifest.flatMap { Upload.declaredID(inManifest: $0.data) })
    }

    public func upload(_ directory: String, to output: String,
                       while stillWanted: @escaping @Sendable () -> Bool) async throws -> (objects: Int, bytes: Int64) {
        try await BucketPublisher(client: client).upload(directory, to: try Self.prefix(output), while: stillWanted)
    }

    public func refusesObject(_ error: any Error) -> Bool {
        guard let error = error as? S3Error else { return false }
        return !error.isTransient && !error.isOutOfSpace
    }

    public func pointer(of output: String) async throws -> RemotePointer? {
        let (output, publisher) = (try Self.prefix(output), BucketPublisher(client: client))
        guard let (pointer, etag) = try await publisher.pointer(output) else { return nil }
        let version = output.appending(pointer.version)
        return RemotePointer(version: version.description, etag: etag, presetHash: try await publisher.presetHash(of: version))
    }

    public func show(_ output: String, version: String) async throws -> Bool {
        let (output, version, publisher) = (try Self.prefix(output), try Self.prefix(version), BucketPublisher(client: client))
        for _ in 0..<3 {  // a pointer changed between the read and the write is read again
            do {
                guard let (pointer, etag) = try await publisher.pointer(output) else {
                    try await publisher.switchPointer(output, to: version, condition: .ifAbsent)
                    return true
                }
                if pointer.version == version.name { return true }
                if try await client.head(output.appending(pointer.version).appending("manifest.json")) != nil { return false }
                if let shown = AttemptVersion.token(of: pointer.version), let own = AttemptVersion.token(of: version.name),
                   shown > own { return false }
                try await publisher.switchPointer(output, to: version, condition: .ifMatch(etag))
                return true
            } catch is PointerMoved {
                continue
            }
        }
        return false
    }

    public func withdraw(_ output: String, version: String) async throws {
        let (output, version, publisher) = (try Self.prefix(output), try Self.prefix(version), BucketPublisher(client: client))
        if let (pointer, _) = try await publisher.pointer(output), pointer.version == version.name {
            try await client.delete(output.appending(BucketPublisher.pointerName))
        }
        for object in try await client.list(version) where object.key.hasPrefix(version.key + "/") && object.key.hasSuffix(".m3u8") {
            try await client.delete(try S3Location(bucket: version.bucket, key: object.key))
        }
    }

    public func mirror(_ directory: String, to version: String,
                       while stillWanted: @escaping @Sendable () -> Bool) throws -> any RemoteMirror {
        BucketMirror(client: client, directory: directory, version: try Self.prefix(version), while: stillWanted)
    }

    public func publish(_ directory: String, to output: String, replacing current: RemotePointer?) async throws -> String {
        let condition: S3WriteCondition = current.map { .ifMatch($0.etag) } ?? .ifAbsent
        return try await BucketPublisher(client: client).publish(directory, to: try Self.prefix(output), condition: condition).version.description
    }

    public func objects(under output: String) async throws -> [String] {
        let directory = try Self.directory(output)
        return try await client.list(directory).map { String($0.key.dropFirst(directory.key.count)) }
    }

    public func removeObjects(under output: String) async throws {
        let directory = try Self.directory(output)
        let keys = try await client.list(directory).map(\.key)
        // What names a version first (a player's next request gets a 404), then the masters, then the rest.
        func rank(_ key: String) -> Int { key.hasSuffix("/" + BucketPublisher.pointerName) ? 0 : key.hasSuffix("/master.m3u8") ? 1 : 2 }
        for group in [0, 1, 2] {
            _ = try await concurrentMap(keys.filter { rank($0) == group }, atMost: 8) { [client, bucket = directory.bucket] key in
                try await client.delete(try S3Location(bucket: bucket, key: key))
            }
        }
    }

    public func setObject(_ url: String, present: Bool) async throws {
        let location = try Self.prefix(url)
        if present {
            try await client.upload(Data(), to: location, contentType: "application/octet-stream", cacheControl: "no-store")
        } else {
            try await client.delete(location)
        }
    }

    public func read(_ url: String, limit: Int) async throws -> Data? {
        try await client.read(try Self.prefix(url), limit: limit)?.data
    }

    public func removeObject(_ url: String) async throws { try await client.delete(try Self.prefix(url)) }

    public func keepsOldVersions(of output: String) async throws -> Bool {
        try await client.versioning(of: try Self.prefix(output).bucket) != nil
    }

    /// `output/` as a key prefix: `<id>/`, never `<id>x/`.
    private static func directory(_ output: String) throws -> S3Location {
        let location = try prefix(output)
        return try S3Location(bucket: location.bucket, key: location.key.hasSuffix("/") ? location.key : location.key + "/")
    }

    private static func prefix(_ url: String) throws -> S3Location {
        guard let location = try S3Location(url: url) else { throw IngestError.cannotWrite(path: url, reason: "not an s3:// prefix") }
        return location
    }
}
