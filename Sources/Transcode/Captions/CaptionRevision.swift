import Foundation

/// A change to a published video's caption tracks, made without encoding it again: a track for
/// the whole video added (in place of the one of its language, if any), or a language's track
/// taken out. The version's files that players hold never change: an added track's files get
/// names of their own (`subs-en.<revision>/`, `captions-en.<revision>.vtt`, the revision a hash
/// of the track), then the master (and each codec's master) and `manifest.json` are replaced
/// whole, in that order. Applied twice, it writes the same names with the same bytes.
public struct CaptionRevision: Sendable {
    public enum Change: Sendable {
        case add(CaptionSource)
        case remove(language: String)
    }

    public var change: Change

    public init(_ change: Change) { self.change = change }

    /// Applies the change to the version at `directory` (on this host). Returns the version's
    /// new manifest and the files written, relative to `directory`, in the order a copy must
    /// receive them (the masters and the manifest last); nil when there is no such track to remove.
    public func apply(to directory: String) throws -> (manifest: ReadyManifest, written: [String])? {
        var manifest = try ReadyManifest(published: directory)
        var captions = manifest.captions ?? [], written: [String] = []
        switch change {
        case .remove(let language):
            guard captions.contains(where: { $0.language == language }) else { return nil }
            captions.removeAll { $0.language == language }
        case .add(let source):
            let (caption, files) = try write(source, into: directory, manifest: manifest)
            written = files
            captions.removeAll { $0.language == source.language }
            captions.append(caption)
        }
        manifest.captions = captions.isEmpty ? nil : captions
        for name in [manifest.master] + (manifest.codecMasters ?? [:]).values.sorted() {
            guard !name.contains("/"), !name.hasPrefix("."),
                  let text = try PublishedLadder.regularFile("\(directory)/\(name)").contents().map({ String(decoding: $0, as: UTF8.self) }) else {
                throw TranscodeError.publishedMismatch(path: "\(directory)/\(name)", detail: "no readable master playlist")
            }
            try DurableFile.replace("\(directory)/\(name)", with: Data(MasterPlaylist.replacingCaptions(text, with: captions).utf8))
            written.append(name)
        }
        try DurableFile.replace("\(directory)/manifest.json", with: manifest.jsonData())
        return (manifest, written + ["manifest.json"])
    }

    /// Writes an added track's segments, playlist and whole file, timed on the published video.
    private func write(_ source: CaptionSource, into directory: String, manifest: ReadyManifest) throws
        -> (ReadyManifest.Caption, [String]) {
        let timeline = try PublishedTimeline(directory: directory, manifest: manifest)
        let track = CaptionTimeline.merge([source.track.cues], duration: manifest.durationSeconds)
        let revision = Self.revision(of: "\(source.language)\n\(source.name)\n\(track.webVTT)")
        let caption = ReadyManifest.Caption(source, revision: revision, track: track)
        let subtitles = OutputLayout.subtitlesDirectoryName(source.language, revision: revision)
        let segments = CaptionSegments(track, boundaries: timeline.boundaries, firstPTS: timeline.firstPTS, ended: true)
        do {
            try FileManager.default.createDirectory(atPath: "\(directory)/\(subtitles)", withIntermediateDirectories: true)
        } catch {
            throw TranscodeError.writeFailed("\(directory)/\(subtitles)", error)
        }
        var written: [String] = []
        for (name, text) in segments.files + [("index.m3u8", segments.playlist)] {
            try DurableFile.replace("\(directory)/\(subtitles)/\(name)", with: Data(text.utf8))
            written.append("\(subtitles)/\(name)")
        }
        try DurableFile.replace("\(directory)/\(caption.track)", with: Data(track.webVTT.utf8))
        return (caption, written + [caption.track])
    }

    /// Eight hex digits of FNV-1a over `text`: a name, not a secret.
    static func revision(of text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        return String(format: "%08x", UInt32(truncatingIfNeeded: hash ^ (hash >> 32)))
    }
}
