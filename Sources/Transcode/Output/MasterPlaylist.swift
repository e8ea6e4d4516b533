import Foundation

/// Renders the multivariant (master) playlist. Variants are listed smallest first, so players
/// that start with the first entry (Safari, iOS) start on the rung a 3G link can carry; at each
/// size the most efficient codec comes first (AV1, HEVC, then H.264), so a player takes the best
/// one it can decode and falls through to H.264, which every player has. The I-frame streams
/// follow in the same order. Caption tracks form one subtitles group (``subtitlesGroup``) that
/// every variant names; none is the default, each may be chosen by the viewer's language.
public enum MasterPlaylist {
    public static let subtitlesGroup = "subs"

    public static func render(_ variants: [VariantStream], iFrameStreams: [IFrameStream] = [],
                              captions: [ReadyManifest.Caption] = []) -> String {
        var lines = ["#EXTM3U", "#EXT-X-VERSION:7", "#EXT-X-INDEPENDENT-SEGMENTS"] + media(captions)
        let subtitles = captions.isEmpty ? "" : subtitlesAttribute
        func order(_ a: (pixels: Int, codec: VideoCodec, peak: Int), _ b: (pixels: Int, codec: VideoCodec, peak: Int)) -> Bool {
            (a.pixels, a.codec.masterRank, a.peak) < (b.pixels, b.codec.masterRank, b.peak)
        }
        for variant in variants.sorted(by: {
            order(($0.width * $0.height, $0.videoCodec, $0.bandwidth.peak), ($1.width * $1.height, $1.videoCodec, $1.bandwidth.peak))
        }) {
            lines.append("#EXT-X-STREAM-INF:BANDWIDTH=\(variant.bandwidth.peak),AVERAGE-BANDWIDTH=\(variant.bandwidth.average),"
                + "CODECS=\"\(variant.codecs)\",RESOLUTION=\(variant.width)x\(variant.height),"
                + "FRAME-RATE=\(String(format: "%.3f", variant.frameRate))\(subtitles)")
            lines.append(variant.uri)
        }
        for stream in iFrameStreams.sorted(by: {
            order(($0.width * $0.height, $0.videoCodec, $0.bandwidth.peak), ($1.width * $1.height, $1.videoCodec, $1.bandwidth.peak))
        }) {
            lines.append("#EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=\(stream.bandwidth.peak),AVERAGE-BANDWIDTH=\(stream.bandwidth.average),"
                + "CODECS=\"\(stream.codecs)\",RESOLUTION=\(stream.width)x\(stream.height),URI=\"\(stream.uri)\"")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static let subtitlesAttribute = ",SUBTITLES=\"\(subtitlesGroup)\""

    /// The subtitles group's `#EXT-X-MEDIA` lines.
    private static func media(_ captions: [ReadyManifest.Caption]) -> [String] {
        captions.map { caption in
            "#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID=\"\(subtitlesGroup)\",LANGUAGE=\"\(caption.language)\","
                + "NAME=\"\(caption.name)\",DEFAULT=NO,AUTOSELECT=YES,URI=\"\(caption.playlist)\""
        }
    }

    /// A master `render` wrote, with its subtitles group made `captions` (none: no group, and no
    /// variant names one); every other line as it was.
    public static func replacingCaptions(_ text: String, with captions: [ReadyManifest.Caption]) -> String {
        var lines: [String] = []
        for line in text.split(separator: "\n").map(String.init) {
            if line.hasPrefix("#EXT-X-MEDIA:"), line.contains("TYPE=SUBTITLES") { continue }
            guard line.hasPrefix("#EXT-X-STREAM-INF:") else {
                lines.append(line)
                if line == "#EXT-X-INDEPENDENT-SEGMENTS" { lines += media(captions) }
                continue
            }
            lines.append(line.replacingOccurrences(of: subtitlesAttribute, with: "") + (captions.isEmpty ? "" : subtitlesAttribute))
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
