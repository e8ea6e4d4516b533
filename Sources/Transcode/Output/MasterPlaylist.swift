import Foundation

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
