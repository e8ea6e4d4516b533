import Foundation

/// A rung's media playlist as ingestd writes it, from the segments that have landed.
///
/// - A growing video (``Kind/event``, RFC 8216 §6.2.1 `EXT-X-PLAYLIST-TYPE:EVENT`): every version
///   is the previous one plus entries, and the last adds only `EXT-X-ENDLIST`. Players start at
///   the beginning (`EXT-X-START:TIME-OFFSET=0`, and `EXT-X-MEDIA-SEQUENCE:0`, without which
///   Chromium takes a first version for a finished video).
/// - A video published whole (``Kind/vod``): one version, written at the end.
///
/// `EXT-X-TARGETDURATION` is fixed by the plan from the first version.
public struct RungPlaylist: Sendable, Equatable {
    public enum Kind: String, Sendable {
        case event = "EVENT"
        case vod = "VOD"
    }

    public struct Segment: Sendable, Equatable {
        public var uri: String
        public var seconds: Double

        public init(uri: String, seconds: Double) {
            self.uri = uri
            self.seconds = seconds
        }
    }

    public let kind: Kind
    /// Whole seconds no segment's rounded duration may pass.
    public let targetDuration: Int
    public let initURI: String
    public private(set) var segments: [Segment] = []
    public private(set) var ended = false

    public init(kind: Kind, targetDuration: Int, initURI: String) {
        self.kind = kind
        self.targetDuration = targetDuration
        self.initURI = initURI
    }

    /// Seconds of video listed.
    public var seconds: Double { segments.reduce(0) { $0 + $1.seconds } }

    /// Appends a complete segment; false (nothing changes) after the end or when its duration
    /// would break the fixed target duration.
    @discardableResult
    public mutating func append(_ segment: Segment) -> Bool {
        guard !ended, segment.seconds > 0, Int(segment.seconds.rounded()) <= targetDuration else { return false }
        segments.append(segment)
        return true
    }

    /// The last version: nothing more will be appended.
    public mutating func end() { ended = true }

    /// This version's text.
    public var text: String {
        var lines = ["#EXTM3U", "#EXT-X-VERSION:7", "#EXT-X-TARGETDURATION:\(targetDuration)", "#EXT-X-MEDIA-SEQUENCE:0",
                     "#EXT-X-PLAYLIST-TYPE:\(kind.rawValue)"]
        if kind == .event { lines.append("#EXT-X-START:TIME-OFFSET=0") }
        lines += ["#EXT-X-INDEPENDENT-SEGMENTS", "#EXT-X-MAP:URI=\"\(initURI)\""]
        for segment in segments {
            lines.append(String(format: "#EXTINF:%.6f,", segment.seconds))
            lines.append(segment.uri)
        }
        if ended { lines.append("#EXT-X-ENDLIST") }
        return lines.joined(separator: "\n") + "\n"
    }
}
