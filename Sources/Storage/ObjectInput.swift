import Foundation
import Ingest
import ObjectStorage
import Transcode

/// An upload kept in a bucket, fetched into a job's scratch before anything opens it:
/// `s3://bucket/key` (one video file) or `s3://bucket/prefix/` (an upload directory: its clips,
/// sound track and `upload.json`, directly under the prefix). Sizes are checked from S3's own
/// answers before a byte is downloaded, and again while reading; an object's name becomes a
/// local name only if it is a plain one (no `/`, no leading `.`, no control characters).
public struct ObjectInput: Sendable {
    public let client: S3Client
    public init(client: S3Client) { self.client = client }

    /// What an upload in a bucket is, from S3's answers alone (nothing downloaded).
    public enum Found: Sendable {
        /// One object: a video file, of `size` bytes.
        case file(S3Location, size: Int64)
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
            return .file(location, size: info.size)
        }
        let base = location.key.isEmpty || location.key.hasSuffix("/") ? location.key : location.key + "/"
        let listed = try await client.list(S3Location(bucket: location.bucket, key: base), atMost: admission.maxUploadFiles + 1)
        guard let manifest = listed.first(where: { $0.key == base + Upload.manifestName }) else {
            throw IngestError.inputMissing(path: location.description)
        }
        guard listed.count <= admission.maxUploadFiles else {
            throw TranscodeError.limitExceeded(path: location.description, limit: "files", measured: "\(listed.count) objects",
                                               allowed: "\(admission.maxUploadFiles)")
        }
        guard manifest.size <= Upload.maxManifestBytes else {
            throw IngestError.badUpload(path: location.description, field: "(file)", reason: "\(Upload.manifestName) is over \(Upload.maxManifestBytes) bytes")
        }
        for object in listed where Self.relative(object.key, to: base).flatMap(Self.localName) == nil {
            throw IngestError.badUpload(path: location.description, field: "objects",
                                        reason: "object \(object.key.debugDescription) is not a plain file name under the prefix")
        }
        try admission.checkSize(listed.reduce(0) { $0 + $1.size } - manifest.size, upload: location.description)
        return .directory(prefix: base, objects: listed)
    }

    /// Downloads the upload at `location` into `directory` (which must exist and be private)
    /// and returns the local path to transcode: a file, or an upload directory. The limits are
    /// checked first (``check(_:limits:)``) and enforced again while reading.
    public func fetch(_ location: S3Location, into directory: String, limits: Preset.Limits) async throws -> String {
        switch try await check(location, limits: limits) {
        case .file(let object, let size):
            // In a directory of its own: no key can collide with the job's files beside it.
            try FileManager.default.createDirectory(atPath: "\(directory)/input", withIntermediateDirectories: false)
            let path = "\(directory)/input/\(Self.localName(object.name) ?? "upload")"
            try await download(object, to: path, limit: limits.maxBytes, size: size)
            return path
        case .directory(let prefix, let objects):
            let upload = "\(directory)/upload"
            try FileManager.default.createDirectory(atPath: upload, withIntermediateDirectories: false)
            var budget = limits.maxBytes + Int64(Upload.maxManifestBytes)
            for object in objects {
                guard let name = Self.relative(object.key, to: prefix) else { continue }  // checked above
                budget -= try await download(try S3Location(bucket: location.bucket, key: object.key), to: "\(upload)/\(name)", limit: budget,
                                             size: object.size)
            }
            return upload
        }
    }

    /// Downloads one object of the upload, which S3 said holds `size` bytes: fewer or more read
    /// (the object replaced meanwhile, or a server or proxy that understated its length) is a
    /// storage fault to retry, never a short file handed to the decoder as a corrupt upload.
    @discardableResult
    private func download(_ location: S3Location, to path: String, limit: Int64, size: Int64) async throws -> Int64 {
        do {
            let read = try await client.download(location, to: path, limit: limit)
            guard read == size else {
                unlink(path)
                throw S3Error(method: "GET", location: location, status: nil, code: nil,
                              message: "read \(read) bytes where the object holds \(size) (replaced meanwhile, or the answer was cut short)")
            }
            return read
        } catch let error as S3ObjectTooLarge {
            throw TranscodeError.limitExceeded(path: location.description, limit: "size", measured: "\(error.size) bytes or more",
                                               allowed: "\(error.limit) bytes")
        } catch let error as S3Error where error.isNotFound {
            throw IngestError.inputMissing(path: location.description)
        }
    }

    /// `name` when it can be a file name in the scratch directory as it is.
    static func localName(_ name: String) -> String? {
        // Byte-wise: a combining mark after `/` must not hide it from a Character comparison.
        let bytes = Array(name.utf8)
        guard !bytes.isEmpty, bytes.count <= 255, bytes.first != UInt8(ascii: "."), !bytes.contains(UInt8(ascii: "/")),
              !bytes.contains(where: { $0 < 0x20 || $0 == 0x7F }) else { return nil }
        return name
    }

    /// The key's bytes after `prefix`, or nil when it does not start with them.
    static func relative(_ key: String, to prefix: String) -> String? {
        let (bytes, head) = (Array(key.utf8), Array(prefix.utf8))
        guard bytes.starts(with: head) else { return nil }
        return String(decoding: bytes[head.count...], as: UTF8.self)
    }
}
