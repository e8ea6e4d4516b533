import Foundation

/// Questions the engine asks a plan as it runs: segments, keyframes, samples, which rungs it writes.
extension TranscodePlan {
    /// True when output frame `index` starts a segment (and so must be an IDR frame).
    public func startsSegment(frame index: Int) -> Bool {
        if let segmentStartFrames { return segmentStartFrames.contains(index) }
        var start = 0
        for seconds in initialSegmentSeconds {
            if index == start { return true }
            start += Int((seconds * Double(frameRate)).rounded())
        }
        return index >= start && (index - start) % (segmentSeconds * frameRate) == 0
    }

    /// `#EXT-X-TARGETDURATION`: no segment the plan cuts is longer (the first ones are shorter,
    /// and the cuts at an upload's IDRs never pass the target; see ``TopRungDecision``).
    public var targetDurationSeconds: Int { segmentSeconds }

    /// The length in frames of each segment of a `totalFrames`-frame output, as the plan cuts it.
    public func segmentFrameCounts(totalFrames: Int) -> [Int] {
        var counts: [Int] = []
        for frame in 0..<max(0, totalFrames) {
            if counts.isEmpty || startsSegment(frame: frame) { counts.append(0) }
            counts[counts.count - 1] += 1
        }
        return counts
    }

    /// An H.264 level as written in specs (`4.1`) as the codec numbers it (41).
    static func levelIDC(_ level: String) -> Int { Int(((Double(level) ?? 4.1) * 10).rounded()) }

    /// Output frames in the duration limit (see ``Admission/maxFrames(frameRate:)``).
    public var maxFrames: Int { admission.maxFrames(frameRate: frameRate) }

    /// Audio samples that cover `frames` video frames exactly.
    public func samples(forFrames frames: Int) -> Int64 {
        Int64(frames) * Int64(audio.sampleRate) / Int64(frameRate)
    }

    /// True when output frame `index` must be a keyframe: every GOP, and every segment start
    /// (short first segments need not fall on the GOP grid); with a passed-through top rung,
    /// exactly the upload's IDR frames.
    public func isKeyframe(frame index: Int) -> Bool {
        if let idrFrames = topRungDecision.idrFrames { return idrFrames.contains(index) }
        return index % gopFrames == 0 || startsSegment(frame: index)
    }

    /// True when the top rung is the upload's own packets.
    public var passesTopRungThrough: Bool { topRungDecision.mode == .passthrough }

    /// Every rung published: the H.264 ladder, then the other codecs'.
    public var allRungs: [PlannedRung] { rungs + codecRungs }

    /// The rungs this run writes (a muxer each): all but the H.264 ones kept from the published version.
    public var writtenRungs: [PlannedRung] { (reusesPublishedLadder ? [] : rungs) + codecRungs }

    /// True when this run muxes the upload's own H.264 packets as the top rung (passed through,
    /// and not kept from a published version).
    public var copiesUploadIntoTopRung: Bool { passesTopRungThrough && !reusesPublishedLadder }

    /// True for the H.264 top rung (which also feeds the MP4), not its AV1 or HEVC twin.
    public func isTopH264(_ rung: PlannedRung) -> Bool { rung.codec == .h264 && rung == topRung }

    /// The rungs the fan-out graph feeds and an encoder encodes: the written ones but a
    /// passed-through top rung.
    public var encodedRungs: [PlannedRung] {
        writtenRungs.filter { !(passesTopRungThrough && isTopH264($0)) }
    }

    /// The sizes the fan-out graph scales to, largest last: one sink each, shared by every encoded
    /// rung of that size (an H.264 rung and its AV1 and HEVC twins are scaled once).
    public var fanOutSizes: [PlannedSize] {
        var sizes: [PlannedSize] = []
        for rung in encodedRungs.sorted(by: { $0.width * $0.height < $1.width * $1.height })
        where sizes.last.map({ $0.width != rung.width || $0.height != rung.height }) ?? true {
            sizes.append(PlannedSize(width: rung.width, height: rung.height))
        }
        return sizes
    }

    /// The fan-out sink that feeds `rung`.
    public func fanOutSink(of rung: PlannedRung) -> Int? {
        fanOutSizes.firstIndex { $0.width == rung.width && $0.height == rung.height }
    }

    /// The distinct sound bitrates of the ladder, lowest first: one AAC encode each, from one mix.
    public var audioBitratesKbps: [Int] { Array(Set(writtenRungs.map(\.audioBitrateKbps))).sorted() }
}
