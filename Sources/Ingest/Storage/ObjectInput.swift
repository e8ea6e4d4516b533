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

    /// What an upload in a bucket is, from S3's answers alone (nothing downloaded).
    public enum Found: Sendable {
        /// One object: a video file.
        case file(S3Location)
        /// An upload directory: every object directly under `prefix` (`upload.json` among them).
        case directory(prefix: String, objects: [S3Client.ListedObject])
    }

    /// Finds the upload at `location` and checks its sizes against `limits` before anything is
    /// downloaded: `too_large` from the sizes S3 reports, `input_missing` when there is neither
    /// an object nor an upload directory, `bad_upload` for a name that cannot be a file name.
    public func check(_ location: S3Location, limits: Preset.Limits) async throws -> Found {
        let admission = Admission(limits: limits)
        if !location.key.isEmpty, !location.key.hasSuffix("/"), let info = try await client.head(location) {
            try admission.checkSize(info.size, upload: location.description)
            return .file(location)
        }
        let base = location.key.isEmpty || location.key.hasSuffix("/") ? location.key : location.key + "/"
        let listed = try await client.list(S3Location(bucket: location.bucket, key: base))
        guard let manifest = listed.first(where: { $0.key == base + Upload.manifestName }) else {
            throw IngestError.inputMissing(path: location.description)
        }
        guard listed.count <= Self.maxObjects else {
            throw TranscodeError.limitExceeded(path: location.description, limit: "files", measured: "\(listed.count) objects",
                                               allowed: "\(Self.maxObjects)")
        }
        guard manifest.size <= Upload.maxManifestBytes else {
            throw IngestError.badUpload(path: location.description, field: "(file)", reason: "\(Upload.manifestName) is over \(Upload.maxManifestBytes) bytes")
        }
        for object in listed where Self.localName(String(object.key.dropFirst(base.count))) == nil {
            throw IngestError.badUpload(path: location.description, field: "objects",
                                        reason: "object name \(String(object.key.dropFirst(base.count)).debugDescription) is not a plain file name")
        }
        try admission.checkSize(listed.reduce(0) { $0 + $1.size } - manifest.size, upload: location.description)
        return .directory(prefix: base, objects: listed)
    }

    /// Downloads the upload at `location` into `directory` (which must exist and be private)
    /// and returns the local path to transcode: a file, or an upload directory. The limits are
    /// checked first (``check(_:limits:)``) and enforced again while reading.
    public func fetch(_ location: S3Location, into directory: String, limits: Preset.Limits) async throws -> String {
        switch try await check(location, limits: limits) {
        case .file(let object):
            let path = "\(directory)/\(Self.localName(object.name) ?? "upload")"
            _ = try await download(object, to: path, limit: limits.maxBytes)
            return path
        case .directory(let prefix, let objects):
            let upload = "\(directory)/upload"
            try FileManager.default.createDirectory(atPath: upload, withIntermediateDirectories: false)
            var budget = limits.maxBytes + Int64(Upload.maxManifestBytes)
            for object in objects {
                let name = String(object.key.dropFirst(prefix.count))
                budget -= try await download(try S3Location(bucket: location.bucket, key: object.key), to: "\(upload)/\(name)", limit: budget)
            }
            return upload
        }
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
