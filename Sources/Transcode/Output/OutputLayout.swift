/// Where each output file goes inside the output directory.
///
///     master.m3u8            multivariant playlist
///     master-<codec>.m3u8    with other codecs: one codec's ladder alone (`av1`, `hevc`, `h264`)
///     <rung>/index.m3u8      media playlist, fMP4: init.mp4 + seg_000.m4s … (`720p`; other
///                            codecs' rungs `av1-720p`, `hevc-720p`)
///     <rung>/iframes.m3u8    I-frame playlist: byte ranges of each segment's IDR frame
///     video.mp4              progressive H.264/AAC MP4 (faststart), the top rung's encode
///     poster_<W>x<H>.jpg     posters, one per size
///     storyboard.jpg/.vtt    scrubbing sprite and its WebVTT map
///     preview.webp           animated preview loop
///     subs-<lang>/index.m3u8 a caption track's subtitles playlist: seg_000.vtt …, one per segment
///     captions-<lang>.vtt    the same track whole (for the web's <track> and the MP4)
///     manifest.json          the ready record
public struct OutputLayout: Sendable {
    public let directory: String
    public static let initSegmentName = "init.mp4"
    /// One codec's ladder alone (`master-av1.m3u8`), beside the master of every codec.
    public static func codecMasterName(_ codec: VideoCodec) -> String { "master-\(codec.rawValue).m3u8" }

    public init(directory: String) { self.directory = directory }

    public var master: String { "\(directory)/master.m3u8" }
    public var mp4: String { "\(directory)/\(Self.mp4Name)" }
    public var manifest: String { "\(directory)/manifest.json" }
    public var storyboardImage: String { "\(directory)/\(Self.storyboardImageName)" }
    public var storyboardTrack: String { "\(directory)/storyboard.vtt" }
    public static let mp4Name = "video.mp4"
    public static let storyboardImageName = "storyboard.jpg"
    public var preview: String { "\(directory)/\(Self.previewName)" }
    public static let previewName = "preview.webp"

    public func rungDirectory(_ rung: TranscodePlan.PlannedRung) -> String { "\(directory)/\(rung.directoryName)" }
    public func playlist(_ rung: TranscodePlan.PlannedRung) -> String { "\(rungDirectory(rung))/index.m3u8" }
    public func iFramePlaylist(_ rung: TranscodePlan.PlannedRung) -> String { "\(rungDirectory(rung))/\(Self.iFramePlaylistName)" }
    public static let iFramePlaylistName = "iframes.m3u8"
    public func segmentPattern(_ rung: TranscodePlan.PlannedRung) -> String { "\(rungDirectory(rung))/seg_%03d.m4s" }
    /// A caption track's directory (`subs-en`; a track added after publish, `subs-en.<revision>`):
    /// its subtitles playlist and segments.
    public static func subtitlesDirectoryName(_ language: String, revision: String? = nil) -> String {
        "subs-\(language)" + (revision.map { ".\($0)" } ?? "")
    }
    public static func subtitlesPlaylistName(_ language: String, revision: String? = nil) -> String {
        "\(subtitlesDirectoryName(language, revision: revision))/index.m3u8"
    }
    /// A caption track whole, beside the MP4 (`captions-en.vtt`, `captions-en.<revision>.vtt`).
    public static func captionsTrackName(_ language: String, revision: String? = nil) -> String {
        "captions-\(language)" + (revision.map { ".\($0)" } ?? "") + ".vtt"
    }

    /// The subtitles directory of a published track, when its paths are names ingestd gives
    /// (read from a manifest, whose paths are not trusted): nil otherwise.
    static func captionFiles(_ caption: ReadyManifest.Caption) -> String? {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-.")
        let parts = caption.playlist.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[1] == "index.m3u8", parts[0].hasPrefix("subs-"), !parts[0].contains(".."),
              parts[0].allSatisfy(allowed.contains), caption.track.hasPrefix("captions-"), caption.track.hasSuffix(".vtt"),
              !caption.track.contains(".."), caption.track.allSatisfy(allowed.contains) else { return nil }
        return String(parts[0])
    }
    public static func posterName(_ size: TranscodePlan.PlannedSize) -> String { "poster_\(size.width)x\(size.height).jpg" }
}

extension OutputLayout {
    /// The number in a segment's name (`seg_012.m4s` → 12), as ``segmentPattern(_:)`` writes it.
    static func segmentIndex(_ name: String) -> Int? {
        guard name.hasPrefix("seg_"), name.hasSuffix(".m4s") else { return nil }
        return Int(name.dropFirst(4).dropLast(4))
    }
}
