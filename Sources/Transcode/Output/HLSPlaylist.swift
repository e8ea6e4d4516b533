import Foundation

/// A parsed HLS media playlist: just what is needed to measure and check it.
public struct MediaPlaylist: Sendable, Equatable {
    public struct Segment: Sendable, Equatable {
        public var uri: String
        public var duration: Double
    }

    public var targetDuration: Int
    public var segments: [Segment]
    public var map: String?

    public var duration: Double { segments.reduce(0) { $0 + $1.duration } }

    init(segments: [Segment], targetDuration: Int = 0, map: String? = nil) {
        self.segments = segments
        self.targetDuration = targetDuration
        self.map = map
    }

    public init(parsing text: String) throws {
        var target: Int?
        var segments: [Segment] = []
        var map: String?
        var pending: Double?
        for raw in text.split(whereSeparator: \.isNewline) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("#EXT-X-TARGETDURATION:") {
                target = Int(line.dropFirst("#EXT-X-TARGETDURATION:".count))
            } else if line.hasPrefix("#EXTINF:") {
                pending = Double(line.dropFirst("#EXTINF:".count).split(separator: ",").first ?? "")
            } else if line.hasPrefix("#EXT-X-MAP:"), let range = line.range(of: "URI=\"") {
                map = String(line[range.upperBound...].prefix { $0 != "\"" })
            } else if !line.isEmpty, !line.hasPrefix("#") {
                guard let duration = pending else { throw TranscodeError.internalFailure("playlist: URI \(line) without #EXTINF") }
                segments.append(Segment(uri: line, duration: duration))
                pending = nil
            }
        }
        guard let target else { throw TranscodeError.internalFailure("playlist: no #EXT-X-TARGETDURATION") }
        self.targetDuration = target
        self.segments = segments
        self.map = map
    }
}

/// Measured bit rates of one rendition, from its segment files.
public struct RenditionBandwidth: Sendable, Equatable, Codable {
    /// Highest segment bit rate, bits per second (HLS `BANDWIDTH`).
    public var peak: Int
    /// Total bits over total duration (HLS `AVERAGE-BANDWIDTH`).
    public var average: Int

    public init(peak: Int, average: Int) {
        self.peak = peak
        self.average = average
    }

    /// Measures a rendition: `sizes[i]` bytes for `playlist.segments[i]`.
    public init(playlist: MediaPlaylist, sizes: [Int]) {
        var peak = 0.0, bits = 0.0
        for (segment, size) in zip(playlist.segments, sizes) where segment.duration > 0 {
            peak = max(peak, Double(size * 8) / segment.duration)
            bits += Double(size * 8)
        }
        let duration = playlist.duration
        self.init(peak: Int(peak.rounded(.up)), average: duration > 0 ? Int((bits / duration).rounded(.up)) : 0)
    }
}

/// One `#EXT-X-STREAM-INF` entry of the multivariant playlist.
public struct VariantStream: Sendable, Equatable, Codable {
    public var uri: String
    public var bandwidth: RenditionBandwidth
    public var codecs: String
    public var width: Int
    public var height: Int
    public var frameRate: Double
}

/// Renders the multivariant (master) playlist. Variants are listed lowest first, so players
/// that start with the first entry (Safari, iOS) start on the rung a 3G link can carry; the
/// I-frame streams follow.
public enum MasterPlaylist {
    public static func render(_ variants: [VariantStream], iFrameStreams: [IFrameStream] = []) -> String {
        var lines = ["#EXTM3U", "#EXT-X-VERSION:7", "#EXT-X-INDEPENDENT-SEGMENTS"]
        for variant in variants.sorted(by: { $0.bandwidth.peak < $1.bandwidth.peak }) {
            lines.append("#EXT-X-STREAM-INF:BANDWIDTH=\(variant.bandwidth.peak),AVERAGE-BANDWIDTH=\(variant.bandwidth.average),"
                + "CODECS=\"\(variant.codecs)\",RESOLUTION=\(variant.width)x\(variant.height),"
                + "FRAME-RATE=\(String(format: "%.3f", variant.frameRate))")
            lines.append(variant.uri)
        }
        for stream in iFrameStreams.sorted(by: { $0.bandwidth.peak < $1.bandwidth.peak }) {
            lines.append("#EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=\(stream.bandwidth.peak),AVERAGE-BANDWIDTH=\(stream.bandwidth.average),"
                + "CODECS=\"\(stream.codecs)\",RESOLUTION=\(stream.width)x\(stream.height),URI=\"\(stream.uri)\"")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
