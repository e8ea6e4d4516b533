import Foundation
import Transcode

/// Checks a decoded ``UploadManifest`` field by field and opens the files it names; every error
/// names the field. Numbers are range-checked before any arithmetic is done with them.
struct UploadValidator {
    let directory: UploadDirectory
    let manifestPath: String
    let limits: Preset.Limits

    private func bad(_ field: String, _ reason: String) -> IngestError {
        .badUpload(path: manifestPath, field: field, reason: reason)
    }

    func validate(_ manifest: UploadManifest) throws -> Upload {
        try validateID(manifest.id)
        for (key, value) in (manifest.metadata ?? [:]).sorted(by: { $0.key < $1.key }) { try storable(value, key: key, in: "metadata") }
        guard !manifest.clips.isEmpty else { throw bad("clips", "at least one clip is required") }
        // Before any clip file is opened: a manifest naming thousands is refused at once.
        if let reason = Admission(limits: limits).clipCountRefusal(manifest.clips.count) { throw bad("clips", reason) }
        var clips: [ClipSource] = [], files: [SourceFile] = []
        for (index, clip) in manifest.clips.enumerated() {
            let field = "clips[\(index)]"
            let start = try seconds(clip.start ?? 0, field: "\(field).start")
            if let end = clip.end {
                _ = try seconds(end, field: "\(field).end")
                guard end > start else { throw bad("\(field).end", "must be greater than start (\(start) s)") }
            }
            let file = try open(clip.file, field: "\(field).file")
            clips.append(ClipSource(path: file.path, startSeconds: start, endSeconds: clip.end))
            files.append(file)
        }
        var music: MusicSource?, musicFile: SourceFile?
        if let audio = manifest.audio {
            let offset = try seconds(audio.offset ?? 0, field: "audio.offset")
            let clipGain = audio.clipGain ?? 0, musicGain = audio.musicGain ?? 0
            guard clipGain.isFinite, (-60...20).contains(clipGain) else { throw bad("audio.clipGain", "must be -60...20 dB") }
            guard musicGain.isFinite, (-60...20).contains(musicGain) else { throw bad("audio.musicGain", "must be -60...20 dB") }
            let fade = audio.fadeOut ?? 1
            guard fade.isFinite, (0...10).contains(fade) else { throw bad("audio.fadeOut", "must be 0...10 seconds") }
            if audio.mode != .mix, audio.clipGain != nil {
                throw bad("audio.clipGain", "only applies with mode \"mix\" (the music replaces the clips' sound)")
            }
            let file = try open(audio.file, field: "audio.file")
            musicFile = file
            music = MusicSource(path: file.path, offsetSeconds: offset, mode: audio.mode ?? .replace, clipGainDB: clipGain,
                                musicGainDB: musicGain, loop: audio.loop ?? false, fadeOutSeconds: fade)
        }
        return Upload(path: directory.path, id: manifest.id, clips: clips, clipFiles: files, music: music,
                      musicFile: musicFile, metadata: manifest.metadata ?? [:], captions: try captions(manifest))
    }

    /// A number of seconds in 0...``Upload/maxSeconds`` (-0 counts as 0).
    private func seconds(_ value: Double, field: String) throws -> Double {
        guard value.isFinite, value >= 0, value <= Upload.maxSeconds else {
            throw bad(field, "must be a number of seconds in 0...\(Int(Upload.maxSeconds))")
        }
        return value + 0  // -0 → 0
    }

    /// Metadata is copied into `manifest.json` and the queue's `jsonb` column: a string or key
    /// holding U+0000, which PostgreSQL cannot store (SQLSTATE 22P05), is refused by field.
    private func storable(_ value: JSONValue, key: String, in parent: String) throws {
        let field = "\(parent).\(key)"
        guard !key.unicodeScalars.contains("\0") else { throw bad(parent, "a key contains the character U+0000 (NUL), which cannot be stored") }
        switch value {
        case .string(let text) where text.unicodeScalars.contains("\0"):
            throw bad(field, "contains the character U+0000 (NUL), which cannot be stored")
        case .array(let items):
            for (index, item) in items.enumerated() { try storable(item, key: "\(key)[\(index)]", in: parent) }
        case .object(let object):
            for (child, item) in object.sorted(by: { $0.key < $1.key }) { try storable(item, key: child, in: field) }
        default:
            break
        }
    }

    private func validateID(_ id: String) throws {
        guard UploadManifest.isValidID(id) else {
            throw bad("id", "must be 1-128 of A-Z a-z 0-9 . _ - and not start with a dot")
        }
    }

    /// Opens `name` inside the upload, or an error naming `field`.
    func open(_ name: String, field: String) throws -> SourceFile {
        guard !name.isEmpty, name.utf8.count <= 1024, !name.contains("\0") else {
            throw bad(field, "must be a non-empty relative file name")
        }
        guard !name.hasPrefix("/") else { throw bad(field, "absolute paths are not allowed (\(name))") }
        let components = name.split(separator: "/", omittingEmptySubsequences: true)
        guard !components.contains("..") else { throw bad(field, "'..' is not allowed: files must be inside the upload (\(name))") }
        guard !components.contains("."), !components.isEmpty, name != Upload.manifestName else {
            throw bad(field, "must name a media file (\(name))")
        }
        do {
            return try directory.openFile(name)
        } catch {
            switch error {
            case .missing: throw bad(field, "no such file in the upload: \(name)")
            case .symbolicLink, .notADirectory:
                throw bad(field, "\(name) is or passes through a symbolic link (links are never followed)")
            case .notARegularFile: throw bad(field, "\(name) is not a regular file")
            case .other(let reason): throw bad(field, "cannot open \(name): \(reason)")
            }
        }
    }
}
