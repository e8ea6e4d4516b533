import Foundation
internal import CFFmpeg

/// Where a published video's segments and first frame lie, for a caption track timed on it
/// after publish: the segments' starts from its first H.264 rung's media playlist, and the first
/// frame's presentation time on the fMP4 timeline from that rung's init section and first
/// segment (read with FFmpeg, never trusted by name: only the manifest's rung, as a plain name).
struct PublishedTimeline {
    /// Each segment's start (seconds), then the end of the last.
    var boundaries: [Double]
    var firstPTS: Double

    init(directory: String, manifest: ReadyManifest) throws {
        let manifestPath = "\(directory)/manifest.json"
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")
        guard let rung = manifest.renditions.first(where: { ($0.videoCodec ?? .h264) == .h264 }), rung.name.allSatisfy(allowed.contains) else {
            throw TranscodeError.publishedMismatch(path: manifestPath, detail: "no H.264 rendition to time captions on")
        }
        let playlistPath = "\(directory)/\(rung.name)/index.m3u8"
        guard let text = try PublishedLadder.regularFile(playlistPath).contents().map({ String(decoding: $0, as: UTF8.self) }),
              let playlist = try? MediaPlaylist(parsing: text), let first = playlist.segments.first,
              [playlist.map ?? OutputLayout.initSegmentName, first.uri].allSatisfy({ !$0.contains("/") }) else {
            throw TranscodeError.publishedMismatch(path: playlistPath, detail: "unreadable media playlist")
        }
        boundaries = playlist.segments.reduce(into: [0.0]) { $0.append($0.last! + $1.duration) }
        var joined = Data()
        for name in [playlist.map ?? OutputLayout.initSegmentName, first.uri] {
            guard let bytes = try PublishedLadder.regularFile("\(directory)/\(rung.name)/\(name)").contents() else {
                throw TranscodeError.publishedMismatch(path: "\(directory)/\(rung.name)/\(name)", detail: "unreadable segment")
            }
            joined.append(bytes)
        }
        let input = try InputContext(file: PublishedLadder.unlinkedFile(joined, in: directory, name: playlistPath))
        guard let video = input.bestStream(AVMEDIA_TYPE_VIDEO) else {
            throw TranscodeError.publishedMismatch(path: playlistPath, detail: "no video stream")
        }
        var least = Int64.max
        let packet = Packet()
        while try input.read(into: packet) {
            if packet.streamIndex == video { least = min(least, packet.pts) }
        }
        guard least != .max else { throw TranscodeError.publishedMismatch(path: playlistPath, detail: "no video packet") }
        firstPTS = Double(least) * av_q2d(input.stream(video).pointee.time_base)
    }
}
