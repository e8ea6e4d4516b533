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
