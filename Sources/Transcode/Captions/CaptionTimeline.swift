/// Places a clip's captions on the output timeline: a cue written on the clip's own timeline
/// moves with the clip's trim and its place in the join, is cut where the clip is cut, and goes
/// when the trim cut all of it, so a cue stays on the frames it was written for.
public enum CaptionTimeline {
    /// A clip as the output holds it: its trim (`from`..<`to`, seconds on its own timeline) and
    /// where its first kept frame lands on the output (seconds).
    public struct Placement: Sendable, Equatable {
        public var from: Double
        public var to: Double
        public var at: Double

        public init(from: Double, to: Double, at: Double) {
            self.from = from
            self.to = to
            self.at = at
        }
    }

    /// `track`'s cues on the output timeline (shifted by `placement`, cut to it).
    public static func place(_ track: CaptionTrack, _ placement: Placement) -> [CaptionTrack.Cue] {
        track.cues.compactMap { cue in
            let start = max(cue.start, placement.from), end = min(cue.end, placement.to)
            guard end > start else { return nil }
            let shift = placement.at - placement.from
            return CaptionTrack.Cue(start: start + shift, end: end + shift, text: cue.text)
        }
    }

    /// One language's cues from several clips, in time order (a stable merge), cut at `duration`
    /// (the published video's length: nothing past its end).
    public static func merge(_ cues: [[CaptionTrack.Cue]], duration: Double) -> CaptionTrack {
        let all = cues.joined().enumerated().sorted { ($0.element.start, $0.offset) < ($1.element.start, $1.offset) }.map(\.element)
        return CaptionTrack(cues: all.compactMap { cue in
            let end = min(cue.end, duration)
            return end > cue.start ? CaptionTrack.Cue(start: cue.start, end: end, text: cue.text) : nil
        })
    }
}
