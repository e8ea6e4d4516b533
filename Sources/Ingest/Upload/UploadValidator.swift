import Foundation
import Transcode

/// Checks a decoded ``UploadManifest`` field by field; every error names the field.
struct UploadValidator {
    let directory: String
    let manifestPath: String
    let limits: Preset.Limits

    private func bad(_ field: String, _ reason: String) -> IngestError {
        .badUpload(path: manifestPath, field: field, reason: reason)
    }

    func validate(_ manifest: UploadManifest) throws -> Upload {
        try validateID(manifest.id)
        guard !manifest.clips.isEmpty else { throw bad("clips", "at least one clip is required") }
        guard manifest.clips.count <= limits.maxClips else {
            throw bad("clips", "\(manifest.clips.count) clips exceed the limit of \(limits.maxClips)")
        }
        let root = try realDirectory()
        var clips: [ClipSource] = []
        for (index, clip) in manifest.clips.enumerated() {
            let field = "clips[\(index)]"
            let path = try resolve(clip.file, field: "\(field).file", root: root)
            let start = clip.start ?? 0
            guard start.isFinite, start >= 0 else { throw bad("\(field).start", "must be a number of seconds ≥ 0") }
            if let end = clip.end {
                guard end.isFinite, end > start else {
                    throw bad("\(field).end", "must be greater than start (\(start) s)")
                }
            }
            clips.append(ClipSource(path: path, startSeconds: start, endSeconds: clip.end))
        }
        var music: MusicSource?
        if let audio = manifest.audio {
            let path = try resolve(audio.file, field: "audio.file", root: root)
            let offset = audio.offset ?? 0
            guard offset.isFinite, offset >= 0 else { throw bad("audio.offset", "must be a number of seconds ≥ 0") }
            let clipGain = audio.clipGain ?? 0, musicGain = audio.musicGain ?? 0
            guard clipGain.isFinite, (-60...20).contains(clipGain) else { throw bad("audio.clipGain", "must be -60...20 dB") }
            guard musicGain.isFinite, (-60...20).contains(musicGain) else { throw bad("audio.musicGain", "must be -60...20 dB") }
            let fade = audio.fadeOut ?? 1
            guard fade.isFinite, (0...10).contains(fade) else { throw bad("audio.fadeOut", "must be 0...10 seconds") }
            if audio.mode != .mix, audio.clipGain != nil {
                throw bad("audio.clipGain", "only applies with mode \"mix\" (the music replaces the clips' sound)")
            }
            music = MusicSource(path: path, offsetSeconds: offset, mode: audio.mode ?? .replace, clipGainDB: clipGain,
                                musicGainDB: musicGain, loop: audio.loop ?? false, fadeOutSeconds: fade)
        }
        return Upload(path: directory, id: manifest.id, clips: clips, music: music, metadata: manifest.metadata ?? [:])
    }

    private func validateID(_ id: String) throws {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
        guard (1...128).contains(id.count), id.allSatisfy(allowed.contains), !id.hasPrefix(".") else {
            throw bad("id", "must be 1-128 of A-Z a-z 0-9 . _ - and not start with a dot")
        }
    }

    private func realDirectory() throws -> String {
        guard let real = realpath(directory, nil) else {
            throw IngestError.inputMissing(path: directory)
        }
        defer { free(real) }
        return String(cString: real)
    }

    /// The real path of `name` inside the upload, or an error naming `field`.
    private func resolve(_ name: String, field: String, root: String) throws -> String {
        guard !name.isEmpty, name.utf8.count <= 1024, !name.contains("\0") else {
            throw bad(field, "must be a non-empty relative file name")
        }
        guard !name.hasPrefix("/") else { throw bad(field, "absolute paths are not allowed (\(name))") }
        let components = name.split(separator: "/", omittingEmptySubsequences: true)
        guard !components.contains("..") else { throw bad(field, "'..' is not allowed: files must be inside the upload (\(name))") }
        guard components.last.map({ $0 != "." }) ?? false, name != Upload.manifestName else {
            throw bad(field, "must name a media file (\(name))")
        }
        let joined = "\(directory)/\(name)"
        var info = stat()
        guard lstat(joined, &info) == 0 || stat(joined, &info) == 0 else {
            throw bad(field, "no such file in the upload: \(name)")
        }
        guard let real = realpath(joined, nil) else {
            throw bad(field, "cannot resolve \(name) (a dangling or looping link?)")
        }
        defer { free(real) }
        let resolved = String(cString: real)
        guard resolved.hasPrefix(root + "/") else {
            throw bad(field, "\(name) leads outside the upload directory (symbolic link to \(resolved))")
        }
        guard stat(resolved, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            throw bad(field, "\(name) is not a regular file")
        }
        return resolved
    }
}
