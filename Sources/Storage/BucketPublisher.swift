import Foundation
import Ingest
import ObjectStorage
import Transcode

/// Publishes a finished output directory into a bucket, where nothing can be renamed: every
/// attempt uploads under its own immutable version prefix (`<output>/<version>/…`), the master
/// playlist last, and only then is the output's pointer moved to it (``switchPointer``) — the
/// one write that makes a version visible. A version no pointer names is never half a ladder
/// in view, only garbage (`ingestd sweep` deletes it after a grace period).
public struct BucketPublisher: Sendable {
    public let client: S3Client
    /// Files uploaded at once.
    public var parallelUploads = 8

    public init(client: S3Client) { self.client = client }

    /// The name of the pointer object beside the versions (single-host publishing).
    public static let pointerName = "current.json"
    /// Written last: a player that can read it can read everything it names.
    static let lastNames = ["master.m3u8", "manifest.json"]

    /// Uploads every file below `directory` under `version` with its content type and cache
    /// policy, ``lastNames`` after all the rest. Returns how many objects and bytes it wrote.
    /// `stillWanted` is asked before each file: once it says no (the attempt lost its lease),
    /// nothing more is sent and ``IngestError/cancelled`` is thrown.
    @discardableResult
    public func upload(_ directory: String, to version: S3Location,
                       while stillWanted: @escaping @Sendable () -> Bool = { true }) async throws -> (objects: Int, bytes: Int64) {
        let files = try Self.files(in: directory)
        let rest = files.filter { !Self.lastNames.contains($0.relative) }
        let last = Self.lastNames.compactMap { name in files.first { $0.relative == name } }
        var bytes: Int64 = 0
        for (batch, width) in [(rest, parallelUploads), (last, 1)] {  // the last files one at a time, in order
            bytes += try await concurrentMap(batch, atMost: width) { file in
                guard stillWanted() else { throw IngestError.cancelled }
                let headers = ObjectHeaders(name: file.relative)
                try await client.upload(file: "\(directory)/\(file.relative)", to: version.appending(file.relative),
                                        contentType: headers.contentType, cacheControl: headers.cacheControl)
                return file.size
            }.reduce(0, +)
        }
        return (files.count, bytes)
    }

    /// Publishes `directory` as a new version of `output`: uploaded under a new version prefix
    /// (``VersionName/fresh(at:)``), then the pointer switched to it under `condition`. Returns the
    /// version prefix; a lost race throws ``PointerMoved`` and leaves the version unnamed.
    public func publish(_ directory: String, to output: S3Location, condition: S3WriteCondition) async throws
        -> (version: S3Location, objects: Int, bytes: Int64) {
        let version = output.appending(VersionName.fresh().name)
        let sent = try await upload(directory, to: version)
        try await switchPointer(output, to: version, condition: condition)
        return (version, sent.objects, sent.bytes)
    }

    /// Points `output` (its `current.json`) at `version`: created only if there is none yet
    /// (`.ifAbsent`), or replaced only if it is still the one read (`.ifMatch(etag)`). Returns
    /// the new pointer's ETag; a lost race throws ``PointerMoved``.
    @discardableResult
    public func switchPointer(_ output: S3Location, to version: S3Location, condition: S3WriteCondition) async throws -> String {
        let pointer = OutputPointer(version: version.name, master: version.appending("master.m3u8").description, publishedAt: Date())
        do {
            return try await client.upload(pointer.json(), to: output.appending(Self.pointerName), contentType: "application/json",
                                           cacheControl: "no-cache", condition: condition)
        } catch let error as S3Error where error.isPreconditionFailed {
            throw PointerMoved(output: output.description)
        }
    }

    /// `output`'s pointer and its ETag (for an `.ifMatch` switch); nil when there is none.
    public func pointer(_ output: S3Location) async throws -> (pointer: OutputPointer, etag: String)? {
        guard let (data, etag) = try await client.read(output.appending(Self.pointerName)) else { return nil }
        return (try Self.decode(OutputPointer.self, from: data), etag)
    }

    /// The preset hash `version`'s manifest records; nil when it has no readable manifest.
    public func presetHash(of version: S3Location) async throws -> String? {
        guard let (data, _) = try await client.read(version.appending("manifest.json")) else { return nil }
        return (try? Self.decode(ReadyManifest.self, from: data))?.preset.hash
    }

    static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(type, from: data)
    }

    /// Whether `output` has a pointer (something is published there): one HEAD.
    public func isPublished(_ output: S3Location) async throws -> Bool {
        try await client.head(output.appending(Self.pointerName)) != nil
    }

    struct File: Equatable {
        var relative: String
        var size: Int64
    }

    /// Regular files below `directory` (links and anything else refused: an output holds none).
    static func files(in directory: String) throws -> [File] {
        var files: [File] = []
        guard let walker = FileManager.default.enumerator(atPath: directory) else {
            throw IngestError.cannotWrite(path: directory, reason: "cannot list the output")
        }
        for case let relative as String in walker {
            var info = stat()
            guard lstat("\(directory)/\(relative)", &info) == 0 else { continue }
            switch info.st_mode & S_IFMT {
            case S_IFREG: files.append(File(relative: relative, size: Int64(info.st_size)))
            case S_IFDIR: continue
            default: throw IngestError.cannotWrite(path: "\(directory)/\(relative)", reason: "not a regular file")
            }
        }
        return files.sorted { $0.relative < $1.relative }
    }
}

/// What `current.json` says: which version of an output is the published one.
public struct OutputPointer: Codable, Sendable, Equatable {
    /// The version prefix's name (below the output's prefix).
    public var version: String
    /// `s3://…/<version>/master.m3u8`.
    public var master: String
    public var publishedAt: Date

    enum CodingKeys: String, CodingKey {
        case version, master
        case publishedAt = "published_at"
    }

    func json() throws -> Data {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys]
        return try encoder.encode(self)
    }
}

/// The `Content-Type` and `Cache-Control` of an output file, by its name: media, posters and
/// the rest of a version are immutable for a year (a version never changes); playlists and
/// the manifest get a short life, as players and CDNs expect of them.
public struct ObjectHeaders: Sendable, Equatable {
    public var contentType: String
    public var cacheControl: String

    public static let immutable = "public, max-age=31536000, immutable"
    public static let short = "public, max-age=60"
    /// A playlist (or master) that still grows: revalidated on every request.
    public static let growing = "no-cache"

    public init(name: String) {
        let ext = (name as NSString).pathExtension.lowercased()
        contentType = switch ext {
        case "m3u8": "application/vnd.apple.mpegurl"
        case "mp4": "video/mp4"
        case "m4s": "video/iso.segment"
        case "jpg", "jpeg": "image/jpeg"
        case "webp": "image/webp"
        case "vtt": "text/vtt"
        case "json": "application/json"
        default: "application/octet-stream"
        }
        cacheControl = ["m3u8", "json"].contains(ext) ? Self.short : Self.immutable
    }
}
