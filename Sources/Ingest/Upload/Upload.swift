import Foundation
import Transcode

/// An upload resolved and validated: the clips to join, the sound track, the metadata.
///
/// A plain video file is a one-clip upload. A directory must hold `upload.json`
/// (``UploadManifest``); every file it names must be a regular file inside the directory
/// (no absolute paths, no `..`, no symlink that leads out), so nothing outside is ever read.
public struct Upload: Sendable, Equatable {
    public static let manifestName = "upload.json"
    /// Largest `upload.json` accepted.
    public static let maxManifestBytes = 64 * 1024

    /// The upload's path (file or directory).
    public var path: String
    /// The manifest's `id`; nil for a plain file.
    public var id: String?
    public var clips: [ClipSource]
    public var music: MusicSource?
    public var metadata: [String: JSONValue]

    /// Opens `path` as an upload, validating a directory's manifest against `limits`.
    public static func open(_ path: String, limits: Preset.Limits) throws -> Upload {
        var info = stat()
        guard lstat(path, &info) == 0 else { throw IngestError.inputMissing(path: path) }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            return Upload(path: path, id: nil, clips: [ClipSource(path: path)], music: nil, metadata: [:])
        }
        let manifestPath = "\(path)/\(manifestName)"
        let manifest = try readManifest(manifestPath)
        return try UploadValidator(directory: path, manifestPath: manifestPath, limits: limits).validate(manifest)
    }

    /// The transcode this upload asks for.
    public func request(outputDirectory: String, preset: Preset) -> TranscodeRequest {
        TranscodeRequest(clips: clips, music: music, outputDirectory: outputDirectory, preset: preset,
                         uploadID: id, metadata: metadata)
    }

    private static func readManifest(_ path: String) throws -> UploadManifest {
        func bad(_ field: String, _ reason: String) -> IngestError { .badUpload(path: path, field: field, reason: reason) }
        var info = stat()
        guard lstat(path, &info) == 0 else { throw bad("(file)", "missing: an upload directory must contain \(manifestName)") }
        guard info.st_mode & S_IFMT == S_IFREG else { throw bad("(file)", "must be a regular file (not a link or directory)") }
        guard info.st_size <= maxManifestBytes else {
            throw bad("(file)", "\(info.st_size) bytes is larger than the \(maxManifestBytes)-byte limit")
        }
        guard let data = FileManager.default.contents(atPath: path) else { throw bad("(file)", "unreadable") }
        do {
            return try StrictJSON.decode(UploadManifest.self, from: data)
        } catch let error as StrictJSON.UnknownField {
            throw bad(error.path, "unknown field")
        } catch let error as DecodingError {
            let (field, reason) = StrictJSON.explain(error)
            throw bad(field, reason)
        } catch {
            throw bad("(document)", "not valid JSON")
        }
    }
}
