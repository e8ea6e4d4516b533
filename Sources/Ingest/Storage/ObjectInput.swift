import Foundation
import ObjectStorage
import Transcode

/// An upload kept in a bucket, fetched into a job's scratch before anything opens it:
/// `s3://bucket/key` (one video file) or `s3://bucket/prefix/` (an upload directory: its clips,
/// sound track and `upload.json`, directly under the prefix). Sizes are checked from S3's own
/// answers before a byte is downloaded, and again while reading; an object's name becomes a
/// local name only if it is a plain one (no `/`, no leading `.`, no control characters).
public struct ObjectInput: Sendable {
    public let client: S3Client
    /// Most objects one upload directory may hold.
    public static let maxObjects = 64

    public init(client: S3Client) { self.client = client }

    /// Downloads the upload at `location` into `directory` (which must exist and be private)
    /// and returns the local path to transcode: a file, or an upload directory.
    public func fetch(_ location: S3Location, into directory: String, limits: Preset.Limits) async throws -> String {
        let admission = Admission(limits: limits)
        if !location.key.isEmpty, !location.key.hasSuffix("/"), let info = try await client.head(location) {
            try admission.checkSize(info.size, upload: location.description)
            let path = "\(directory)/\(Self.localName(location.name) ?? "upload")"
            _ = try await download(location, to: path, limit: limits.maxBytes)
            return path
        }
        let base = location.key.isEmpty || location.key.hasSuffix("/") ? location.key : location.key + "/"
        let listed = try await client.list(S3Location(bucket: location.bucket, key: base))
        guard listed.contains(where: { $0.key == base + Upload.manifestName }) else { throw IngestError.inputMissing(path: location.description) }
        guard listed.count <= Self.maxObjects else {
            throw TranscodeError.limitExceeded(path: location.description, limit: "files", measured: "\(listed.count) objects",
                                               allowed: "\(Self.maxObjects)")
        }
        let total = listed.reduce(Int64(0)) { $0 + $1.size }
        try admission.checkSize(total - (listed.first { $0.key == base + Upload.manifestName }?.size ?? 0), upload: location.description)
        let upload = "\(directory)/upload"
        try FileManager.default.createDirectory(atPath: upload, withIntermediateDirectories: false)
        var budget = limits.maxBytes + Int64(Upload.maxManifestBytes)
        for object in listed {
            let name = String(object.key.dropFirst(base.count))
            guard let local = Self.localName(name) else {
                throw IngestError.badUpload(path: location.description, field: "objects", reason: "object name \(name.debugDescription) is not a plain file name")
            }
            budget -= try await download(try S3Location(bucket: location.bucket, key: object.key), to: "\(upload)/\(local)", limit: budget)
        }
        return upload
    }

    private func download(_ location: S3Location, to path: String, limit: Int64) async throws -> Int64 {
        do {
            return try await client.download(location, to: path, limit: limit)
        } catch let error as S3ObjectTooLarge {
            throw TranscodeError.limitExceeded(path: location.description, limit: "size", measured: "\(error.size) bytes or more",
                                               allowed: "\(error.limit) bytes")
        } catch let error as S3Error where error.isNotFound {
            throw IngestError.inputMissing(path: location.description)
        }
    }

    /// `name` when it can be a file name in the scratch directory as it is.
    static func localName(_ name: String) -> String? {
        guard !name.isEmpty, !name.hasPrefix("."), !name.contains("/"), name.utf8.count <= 255,
              !name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else { return nil }
        return name
    }
}
