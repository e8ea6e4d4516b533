import Foundation
internal import CFFmpeg

/// The version of a video already published, whose H.264 rungs, MP4 and sound a hot transcode
/// keeps as they are (``TranscodePlan/reusesPublishedLadder``): the H.264 files are copied byte
/// for byte, and each new rung carries the AAC packets of the published rung of its name.
///
/// Nothing is trusted by name from the published files: every path is built from the plan's rung
/// names, only regular files are read, and the published ladder must match the plan (the same
/// rungs at the same sizes, segments cut at the plan's frames), or the new rungs could not share
/// its keyframes, segments and sound.
final class PublishedLadder {
    let directory: String
    let manifest: ReadyManifest
    /// The published video's length in frames (at the plan's frame rate, which it shares).
    let publishedFrames: Int
    /// Each published rung's media playlist, by rung name, read and checked once in `init`.
    private let playlists: [String: MediaPlaylist]
    /// Each published rung's sound, read once (its AV1 and HEVC twins both carry it).
    private var sounds: [String: Sound] = [:]

    /// Reads `directory/manifest.json` and checks the published ladder against `plan`.
    init(directory: String, plan: TranscodePlan) throws {
        self.directory = directory
        let manifestPath = "\(directory)/manifest.json"
        let manifest = try ReadyManifest(published: directory)
        self.manifest = manifest
        guard manifest.frameRate == plan.frameRate else {
            throw TranscodeError.publishedMismatch(path: manifestPath, detail: "published at \(manifest.frameRate) fps, planned at \(plan.frameRate)")
        }
        publishedFrames = Int((manifest.durationSeconds * Double(plan.frameRate)).rounded())
        let expected = plan.segmentFrameCounts(totalFrames: publishedFrames)
        var playlists: [String: MediaPlaylist] = [:]
        for rung in plan.rungs {
            guard let published = manifest.renditions.first(where: { $0.name == rung.name }),
                  published.width == rung.width, published.height == rung.height else {
                throw TranscodeError.publishedMismatch(path: manifestPath, detail: "no \(rung.name) rendition at \(rung.width)x\(rung.height): "
                    + "published with preset \(manifest.preset.name) (\(manifest.preset.hash)); reprocess it first with a preset of this "
                    + "H.264 ladder (for Presets/hot.json: the default preset)")
            }
            let playlistPath = "\(directory)/\(rung.name)/index.m3u8"
            guard let text = try? Self.regularFile(playlistPath).contents().map({ String(decoding: $0, as: UTF8.self) }),
                  let playlist = try? MediaPlaylist(parsing: text) else {
                throw TranscodeError.publishedMismatch(path: playlistPath, detail: "unreadable media playlist")
            }
            let found = playlist.segments.map { Int(($0.duration * Double(plan.frameRate)).rounded()) }
            guard found == expected else {
                throw TranscodeError.publishedMismatch(path: playlistPath, detail: "segments of \(found) frames where the plan cuts "
                    + "\(expected): published with preset \(manifest.preset.name) (\(manifest.preset.hash)), another keyframe layout")
            }
            playlists[rung.name] = playlist
        }
        self.playlists = playlists
    }

    /// The codec string of the published H.264 rung `name` (its video's, without the sound's).
    func codecString(of name: String) throws -> String {
        guard let codecs = manifest.renditions.first(where: { $0.name == name })?.codecs,
              let video = codecs.split(separator: ",").first, video.hasPrefix("avc1.") else {
            throw TranscodeError.publishedMismatch(path: "\(directory)/manifest.json", detail: "no H.264 CODECS for \(name)")
        }
        return String(video)
    }

    /// Throws unless the video decoded now is as long as the published one (the new rungs must
    /// cover exactly the kept rungs' frames).
    func checkLength(frames: Int) throws {
        guard frames == publishedFrames else {
            throw TranscodeError.publishedMismatch(path: "\(directory)/manifest.json",
                                                   detail: "\(publishedFrames) frames published, \(frames) decoded now")
        }
    }

    /// Copies every H.264 rung's files and the MP4 into `layout`, byte for byte.
    func copyH264(_ plan: TranscodePlan, into layout: OutputLayout) throws {
        for rung in plan.rungs {
            let from = "\(directory)/\(rung.name)"
            try FileManager.default.createDirectory(atPath: layout.rungDirectory(rung), withIntermediateDirectories: true)
            for name in try FileManager.default.contentsOfDirectory(atPath: from).sorted() where !name.hasPrefix(".") {
                try copy("\(from)/\(name)", to: "\(layout.rungDirectory(rung))/\(name)")
            }
        }
        try copy("\(directory)/\(OutputLayout.mp4Name)", to: layout.mp4)
        // The caption tracks are kept with the H.264 ladder they were timed on.
        for caption in manifest.captions ?? [] {
            guard let subtitles = OutputLayout.captionFiles(caption) else {
                throw TranscodeError.publishedMismatch(path: "\(directory)/manifest.json", detail: "a caption track named as ingestd names none")
            }
            let track = caption.track
            let from = "\(directory)/\(subtitles)", into = "\(layout.directory)/\(subtitles)"
            try FileManager.default.createDirectory(atPath: into, withIntermediateDirectories: true)
            for name in try FileManager.default.contentsOfDirectory(atPath: from).sorted() where !name.hasPrefix(".") {
                try copy("\(from)/\(name)", to: "\(into)/\(name)")
            }
            try copy("\(directory)/\(track)", to: "\(layout.directory)/\(track)")
        }
    }

    /// What a new rung takes from the published rung of its name.
    struct Sound {
        /// The AAC stream's parameters, and every packet in order, timed so that the first video
        /// frame is at 0 (the muxer moved the whole file later by its earliest decode time).
        var parameters: StreamParameters
        var packets: [Packet]
        /// Frames the published video is decoded ahead of its presentation (B-frames), which the
        /// new rung's video matches (``RungEncoder``) so that both start at the same instant.
        var videoDelayFrames: Int
    }

    /// The sound of the published rung `rung.name`, read from its init segment and segments joined
    /// (one fragmented MP4). `scratch` is a directory where a file may be made and unlinked at once.
    func sound(of rung: TranscodePlan.PlannedRung, frameRate: Int, scratch: String) throws -> Sound {
        if let read = sounds[rung.name] { return read }
        let from = "\(directory)/\(rung.name)"
        let playlistPath = "\(from)/index.m3u8"
        guard let playlist = playlists[rung.name] else {
            throw TranscodeError.publishedMismatch(path: playlistPath, detail: "no published rung \(rung.name)")
        }
        var joined = Data()
        for name in [playlist.map ?? OutputLayout.initSegmentName] + playlist.segments.map(\.uri) {
            guard !name.contains("/"), let bytes = try Self.regularFile("\(from)/\(name)").contents() else {
                throw TranscodeError.publishedMismatch(path: "\(from)/\(name)", detail: "unreadable segment")
            }
            joined.append(bytes)
        }
        let input = try InputContext(file: Self.unlinkedFile(joined, in: scratch, name: playlistPath))
        guard let index = input.bestStream(AVMEDIA_TYPE_AUDIO), let video = input.bestStream(AVMEDIA_TYPE_VIDEO) else {
            throw TranscodeError.publishedMismatch(path: playlistPath, detail: "no sound or no video stream")
        }
        let parameters = try StreamParameters(input: input, streamIndex: index)
        let videoTimeBase = input.stream(video).pointee.time_base
        var packets: [Packet] = []
        var firstVideoPTS = Int64.max, firstVideoDTS: Int64?
        let packet = Packet()
        while try input.read(into: packet) {
            if packet.streamIndex == index { packets.append(packet.reference()) }
            if packet.streamIndex == video {
                firstVideoPTS = min(firstVideoPTS, packet.pts)
                if firstVideoDTS == nil { firstVideoDTS = packet.dts }
            }
        }
        guard let firstVideoDTS, firstVideoPTS != .max else {
            throw TranscodeError.publishedMismatch(path: playlistPath, detail: "no video packet")
        }
        let shift = av_rescale_q(firstVideoPTS, videoTimeBase, parameters.timeBase)
        for packet in packets { packet.shiftTimestamps(by: shift) }
        let delay = av_rescale_q(firstVideoPTS - firstVideoDTS, videoTimeBase, AVRational(num: 1, den: Int32(frameRate)))
        let sound = Sound(parameters: parameters, packets: packets, videoDelayFrames: Int(delay))
        sounds[rung.name] = sound
        return sound
    }

    private func copy(_ from: String, to: String) throws {
        guard let bytes = try Self.regularFile(from).contents() else {
            throw TranscodeError.publishedMismatch(path: from, detail: "unreadable")
        }
        do {
            try bytes.write(to: URL(fileURLWithPath: to))
        } catch {
            throw TranscodeError.writeFailed(to, error)
        }
    }

    /// `path` opened as a regular file (never through a symbolic link).
    static func regularFile(_ path: String) throws -> SourceFile {
        do {
            return try SourceFile(path: path)
        } catch {
            throw TranscodeError.publishedMismatch(path: path, detail: "\(error)")
        }
    }

    /// `bytes` in a file of `scratch` that has no name (unlinked once written), read as `name`.
    static func unlinkedFile(_ bytes: Data, in scratch: String, name: String) throws -> SourceFile {
        let path = "\(scratch)/.published-sound-\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
        let descriptor = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw TranscodeError.writeFailed(path, errno: errno) }
        unlink(path)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else {
                let failed = TranscodeError.writeFailed(path, errno: written == 0 ? ENOSPC : errno)
                close(descriptor)
                throw failed
            }
            offset += written
        }
        return try SourceFile(adopting: descriptor, path: name)
    }
}

extension ReadyManifest {
    /// The manifest of the published version at `directory` (a regular file, never through a link).
    init(published directory: String) throws {
        let path = "\(directory)/manifest.json"
        guard let data = try? PublishedLadder.regularFile(path).contents(),
              let manifest = try? JSONDecoder().decode(ReadyManifest.self, from: data) else {
            throw TranscodeError.publishedMismatch(path: path, detail: "no readable manifest.json")
        }
        self = manifest
    }
}
