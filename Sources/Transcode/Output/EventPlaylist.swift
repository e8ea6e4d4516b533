import Foundation

/// A rung's media playlist while its video grows (RFC 8216 §6.2.1, `EXT-X-PLAYLIST-TYPE:EVENT`):
/// every version is the previous one plus entries, and the last adds only `EXT-X-ENDLIST`.
/// `EXT-X-TARGETDURATION` is fixed by the plan from the first version; players start at the
/// beginning (`EXT-X-START:TIME-OFFSET=0`, and `EXT-X-MEDIA-SEQUENCE:0`, without which Chromium
/// takes a first version for a finished video).
public struct EventPlaylist: Sendable, Equatable {
    public struct Segment: Sendable, Equatable {
        public var uri: String
        public var seconds: Double

        public init(uri: String, seconds: Double) {
            self.uri = uri
            self.seconds = seconds
        }
    }

    /// Whole seconds no segment's rounded duration may pass.
    public let targetDuration: Int
    public let initURI: String
    public private(set) var segments: [Segment] = []
    public private(set) var ended = false

    public init(targetDuration: Int, initURI: String) {
        self.targetDuration = targetDuration
        self.initURI = initURI
    }

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
                     "#EXT-X-PLAYLIST-TYPE:EVENT", "#EXT-X-START:TIME-OFFSET=0", "#EXT-X-INDEPENDENT-SEGMENTS",
                     "#EXT-X-MAP:URI=\"\(initURI)\""]
        for segment in segments {
            lines.append(String(format: "#EXTINF:%.6f,", segment.seconds))
            lines.append(segment.uri)
        }
        if ended { lines.append("#EXT-X-ENDLIST") }
        return lines.joined(separator: "\n") + "\n"
    }
}
