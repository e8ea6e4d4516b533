import Foundation
import Transcode

/// An upload resolved, validated and opened: the clips to join, the sound track, the metadata.
///
/// A plain video file is a one-clip upload. A directory must hold `upload.json`
/// (``UploadManifest``); every file it names is opened relative to the directory without
/// following links (no absolute paths, no `..`, no symbolic link at all), so nothing outside it
/// is ever read. Each file stays open: the descriptors checked here are the ones decoded.
public struct Upload: Sendable {
    public static let manifestName = "upload.json"
    /// Largest `upload.json` accepted.
    public static let maxManifestBytes = 64 * 1024
    /// Largest trim or offset accepted, in seconds (a day); checked before any arithmetic.
    public static let maxSeconds = 86_400.0

    /// The upload's path (file or directory), for messages.
    public var path: String
    /// The manifest's `id`; nil for a plain file.
    public var id: String?
    public var clips: [ClipSource]
    public var clipFiles: [SourceFile]
    public var music: MusicSource?
    public var musicFile: SourceFile?
    public var metadata: [String: JSONValue]
    /// Caption tracks, read and cleaned.
    public var captions: [CaptionSource] = []

    /// Opens `path` (a video file or an upload directory; not a link), validating a directory's
    /// manifest against `limits`.
    public static func open(_ path: String, limits: Preset.Limits) throws -> Upload {
        try open(UploadEntry.open(path), limits: limits)
    }

    /// Opens the single upload held in `holder` (the spool's `work/<id>/upload/`), whatever bytes
    /// its name is made of.
    public static func openSole(in holder: String, limits: Preset.Limits) throws -> Upload {
        try open(UploadEntry.openSole(in: holder), limits: limits)
    }

    /// The `id` an upload directory's `upload.json` declares, read as safely as the upload
    /// itself (no link followed, size-limited); nil for a plain file or a manifest without a valid id.
    public static func declaredID(of input: TranscodeJob.Input) -> String? { manifestBytes(of: input).flatMap(declaredID(inManifest:)) }

    /// The playback policy an upload directory's `upload.json` asks for, read as ``declaredID(of:)``
    /// reads its id; nil for a plain file or a manifest that asks none.
    public static func declaredPlayback(of input: TranscodeJob.Input) -> PlaybackPolicy? {
        struct Declared: Decodable { var playback: PlaybackPolicy? }
        return manifestBytes(of: input).flatMap { try? JSONDecoder().decode(Declared.self, from: $0) }?.playback
    }

    /// An upload directory's `upload.json`, read without following a link, at most ``maxManifestBytes``.
    private static func manifestBytes(of input: TranscodeJob.Input) -> Data? {
        let entry: UploadEntry?
        switch input {
        case .path(let path): entry = try? UploadEntry.open(path)
        case .soleEntry(let holder): entry = try? UploadEntry.openSole(in: holder)
        }
        guard case .directory(let directory)? = entry else { return nil }
        return try? directory.read(manifestName, limit: maxManifestBytes)
    }

    /// The valid `id` an `upload.json`'s bytes declare, wherever they were read (a directory, a bucket).
    public static func declaredID(inManifest data: Data) -> String? {
        struct Declared: Decodable { var id: String }
        guard data.count <= maxManifestBytes, let id = (try? JSONDecoder().decode(Declared.self, from: data))?.id,
              UploadManifest.isValidID(id) else { return nil }
        return id
    }

    private static func open(_ entry: UploadEntry, limits: Preset.Limits) throws -> Upload {
        switch entry {
        case .file(let file):
            return Upload(path: file.path, id: nil, clips: [ClipSource(path: file.path)], clipFiles: [file],
                          music: nil, musicFile: nil, metadata: [:], captions: [])
        case .directory(let directory):
            let manifestPath = "\(directory.path)/\(manifestName)"
            let manifest = try readManifest(directory, path: manifestPath)
            return try UploadValidator(directory: directory, manifestPath: manifestPath, limits: limits).validate(manifest)
        }
    }

    /// The transcode this upload asks for.
    public func request(outputDirectory: String, preset: Preset) -> TranscodeRequest {
        var request = TranscodeRequest(clips: Array(zip(clips, clipFiles)), music: music.flatMap { m in musicFile.map { (m, $0) } },
                                       outputDirectory: outputDirectory, preset: preset, uploadID: id, metadata: metadata)
        request.captions = captions
        return request
    }

    private static func readManifest(_ directory: UploadDirectory, path: String) throws -> UploadManifest {
        func bad(_ field: String, _ reason: String) -> IngestError { .badUpload(path: path, field: field, reason: reason) }
        let data: Data
        do {
            data = try directory.read(manifestName, limit: maxManifestBytes)
        } catch {
            switch error {
            case .missing: throw bad("(file)", "missing: an upload directory must contain \(manifestName)")
            case .symbolicLink, .notADirectory, .notARegularFile: throw bad("(file)", "must be a regular file (not a link or directory)")
            case .other(let reason): throw bad("(file)", reason)
            }
        }
        // PostgreSQL's jsonb (and every JSON reader downstream) takes UTF-8 only: say where it breaks.
        var bytes = data.makeIterator(), parser = Unicode.UTF8.ForwardParser(), offset = 0
        parsing: while true {
            switch parser.parseScalar(from: &bytes) {
            case .valid(let scalar): offset += scalar.count
            case .emptyInput: break parsing
            case .error: throw bad("(document)", "not valid UTF-8 (at byte \(offset))")
            }
        }
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
