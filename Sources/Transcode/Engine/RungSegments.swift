import Foundation

/// A rung's segments as its muxer lands them (``DurableFiles``), and the media playlist ingestd
/// writes for them: each segment's length comes from the plan's cuts, so the playlist is known
/// the moment a segment is whole. A growing run writes a new version each time a segment lands
/// (a reader never sees a segment named before it is whole); every run writes the last version
/// at the end. Used on the rung's thread only.
final class RungSegments {
    private let frameRate: Double
    private let path: String
    private var playlist: RungPlaylist
    /// The first frame of each segment the rung has muxed (or queued to), in order.
    private var starts: [Int] = []
    /// One past the last frame muxed.
    private var endFrame = 0
    private var initLanded = false
    /// Segments landed before the init section (listed once it lands).
    private var waiting: [RungPlaylist.Segment] = []
    /// Called with the seconds listed after each new version, and whether it was the last.
    private let listed: (Double, Bool) throws -> Void

    init(plan: TranscodePlan, path: String, growing: Bool, listed: @escaping (Double, Bool) throws -> Void) {
        frameRate = Double(plan.frameRate)
        self.path = path
        self.listed = listed
        playlist = RungPlaylist(kind: growing ? .event : .vod, targetDuration: plan.targetDurationSeconds,
                                initURI: OutputLayout.initSegmentName)
    }

    /// A video packet of output frame `frame` goes to the muxer; `startsSegment` when the muxer
    /// cuts there.
    func video(frame: Int, startsSegment: Bool) {
        if startsSegment, frame > (starts.last ?? -1) { starts.append(frame) }
        endFrame = max(endFrame, frame + 1)
    }

    /// Files the muxer made visible (``DurableFiles/takeLanded()``): lists the segments among them.
    func landed(_ paths: [String]) throws {
        guard !paths.isEmpty else { return }
        for path in paths {
            let name = (path as NSString).lastPathComponent
            if name == OutputLayout.initSegmentName {
                initLanded = true
                continue
            }
            guard let index = OutputLayout.segmentIndex(name), index < starts.count else {
                throw TranscodeError.internalFailure("\(path): a segment the plan did not cut")
            }
            let end = index + 1 < starts.count ? starts[index + 1] : endFrame
            waiting.append(.init(uri: name, seconds: Double(end - starts[index]) / frameRate))
        }
        guard initLanded, !waiting.isEmpty else { return }
        for segment in waiting where !playlist.append(segment) {
            throw TranscodeError.internalFailure("\(path): \(segment.uri) lasts \(segment.seconds) s, "
                + "past the target duration \(playlist.targetDuration) s")
        }
        waiting.removeAll()
        if playlist.kind == .event { try write(last: false) }
    }

    /// After the muxer's trailer: the last version, which lists every segment the plan cut.
    func finish() throws {
        guard playlist.segments.count == starts.count, waiting.isEmpty else {
            throw TranscodeError.internalFailure("\(path): \(playlist.segments.count) segments landed of the \(starts.count) cut")
        }
        playlist.end()
        try write(last: true)
    }

    /// Replaces the playlist with its version now, then says how much it lists.
    private func write(last: Bool) throws {
        try DurableFile.replace(path, with: Data(playlist.text.utf8))
        try listed(playlist.seconds, last)
    }
}
