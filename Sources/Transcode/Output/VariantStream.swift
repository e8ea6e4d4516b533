import Foundation

/// One `#EXT-X-STREAM-INF` entry of the multivariant playlist.
public struct VariantStream: Sendable, Equatable, Codable {
    public var uri: String
    public var bandwidth: RenditionBandwidth
    public var codecs: String
    public var width: Int
    public var height: Int
    public var frameRate: Double
    public var videoCodec: VideoCodec = .h264
}
