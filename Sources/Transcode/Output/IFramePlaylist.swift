import Foundation

/// An I-frame (trick-play) playlist: one byte range per segment, from its `moof` to the end of
/// the IDR frame that starts it, for scrubbing and fast-forward previews.
public struct IFramePlaylist: Sendable, Equatable {
    public struct Entry: Sendable, Equatable {
        public var uri: String
        public var offset: Int
        public var length: Int
        /// Time until the next entry (the segment's duration).
        public var duration: Double
    }

    public var map: String
    public var entries: [Entry]

    public init(map: String, entries: [Entry]) {
        self.map = map
        self.entries = entries
    }

    /// Measures it like a rendition: peak and average bits per second of the I-frames alone.
    public var bandwidth: RenditionBandwidth {
        let playlist = MediaPlaylist(segments: entries.map { .init(uri: $0.uri, duration: $0.duration) })
        return RenditionBandwidth(playlist: playlist, sizes: entries.map(\.length))
    }

    public func render() -> String {
        let target = Int((entries.map(\.duration).max() ?? 1).rounded())
        var lines = ["#EXTM3U", "#EXT-X-VERSION:7", "#EXT-X-TARGETDURATION:\(max(1, target))", "#EXT-X-MEDIA-SEQUENCE:0",
                     "#EXT-X-PLAYLIST-TYPE:VOD", "#EXT-X-I-FRAMES-ONLY", "#EXT-X-INDEPENDENT-SEGMENTS", "#EXT-X-MAP:URI=\"\(map)\""]
        for entry in entries {
            lines.append(String(format: "#EXTINF:%.6f,", entry.duration))
            lines.append("#EXT-X-BYTERANGE:\(entry.length)@\(entry.offset)")
            lines.append(entry.uri)
        }
        lines.append("#EXT-X-ENDLIST")
        return lines.joined(separator: "\n") + "\n"
    }
}

/// One `#EXT-X-I-FRAME-STREAM-INF` entry of the multivariant playlist.
public struct IFrameStream: Sendable, Equatable, Codable {
    public var uri: String
    public var bandwidth: RenditionBandwidth
    /// Video codec only (I-frame streams carry no audio).
    public var codecs: String
    public var width: Int
    public var height: Int
    public var videoCodec: VideoCodec = .h264
}
