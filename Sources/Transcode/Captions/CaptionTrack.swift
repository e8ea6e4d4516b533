import Foundation

/// A caption track as the app sent it (WebVTT or SRT), read, checked and cleaned: cues in time
/// order, each with start and end seconds on its own timeline and text in WebVTT's cue markup
/// only. Everything a stranger's file may try is refused with the reason, or removed where a
/// WebVTT player would ignore it (docs/UPLOADS.md, "Captions").
public struct CaptionTrack: Sendable, Equatable {
    public struct Cue: Sendable, Equatable {
        public var start: Double
        public var end: Double
        /// One or more lines, `\n` between them; only WebVTT's own cue tags, entities kept.
        public var text: String

        public init(start: Double, end: Double, text: String) {
            self.start = start
            self.end = end
            self.text = text
        }
    }

    public var cues: [Cue]

    public init(cues: [Cue]) { self.cues = cues }

    /// What a track may be.
    public struct Limits: Sendable, Equatable {
        public var maxBytes = 512 << 10
        public var maxCues = 2_000
        public var maxLineBytes = 200
        public var maxLinesPerCue = 4
        /// No cue may start this late (the longest upload's length, with room).
        public var maxSeconds = 86_400.0

        public init() {}
    }

    /// Why a track was refused: one sentence naming the line and what is wrong with it.
    public struct Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        public var reason: String
        public var description: String { reason }
    }

    /// The track as WebVTT, ready to publish.
    public var webVTT: String {
        var lines = ["WEBVTT", ""]
        for cue in cues {
            lines.append("\(Self.timestamp(cue.start)) --> \(Self.timestamp(cue.end))")
            lines.append(cue.text)
            lines.append("")
        }
        return lines.joined(separator: "\n")
    }

    /// `HH:MM:SS.mmm`.
    public static func timestamp(_ seconds: Double) -> String {
        let millis = Int((max(0, seconds) * 1000).rounded())
        return String(format: "%02d:%02d:%02d.%03d", millis / 3_600_000, millis / 60_000 % 60, millis / 1000 % 60, millis % 1000)
    }
}
