import Foundation

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
