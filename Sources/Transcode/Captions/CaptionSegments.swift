/// A caption track cut into WebVTT segments beside the video's: one per video segment, each
/// holding the cues that overlap it (a cue over a boundary is in both, as players expect), its
/// `X-TIMESTAMP-MAP` tying the cue clock to the fMP4 timeline, and the media playlist naming them.
public struct CaptionSegments: Sendable, Equatable {
    /// Each segment's file name and WebVTT text, in order.
    public var files: [(name: String, text: String)]
    /// The subtitles media playlist (`VOD` with `#EXT-X-ENDLIST` once `ended`, else `EVENT`).
    public var playlist: String

    public static func == (a: CaptionSegments, b: CaptionSegments) -> Bool {
        a.playlist == b.playlist && a.files.map(\.name) == b.files.map(\.name) && a.files.map(\.text) == b.files.map(\.text)
    }

    /// `boundaries`: the video segments' start times, then the end of the last listed
    /// (seconds on the output timeline); `firstPTS`: the video's first presentation time on the
    /// fMP4 timeline (seconds), which a cue at 0 is shown with.
    public init(_ track: CaptionTrack, boundaries: [Double], firstPTS: Double, ended: Bool) {
        let header = "WEBVTT\nX-TIMESTAMP-MAP=MPEGTS:\(Int((firstPTS * 90_000).rounded())),LOCAL:00:00:00.000\n"
        var files: [(name: String, text: String)] = []
        var lines = ["#EXTM3U", "#EXT-X-VERSION:7",
                     "#EXT-X-TARGETDURATION:\(Int(zip(boundaries, boundaries.dropFirst()).map { $1 - $0 }.max()?.rounded(.up) ?? 1))",
                     "#EXT-X-MEDIA-SEQUENCE:0", "#EXT-X-PLAYLIST-TYPE:\(ended ? "VOD" : "EVENT")"]
        for (index, (start, end)) in zip(boundaries, boundaries.dropFirst()).enumerated() {
            let cues = track.cues.filter { $0.start < end && $0.end > start }
            let name = String(format: "seg_%03d.vtt", index)
            files.append((name, header + CaptionTrack(cues: cues).webVTT.dropFirst("WEBVTT\n".count)))
            lines += [String(format: "#EXTINF:%.3f,", end - start), name]
        }
        if ended { lines.append("#EXT-X-ENDLIST") }
        self.files = files
        playlist = lines.joined(separator: "\n") + "\n"
    }
}
