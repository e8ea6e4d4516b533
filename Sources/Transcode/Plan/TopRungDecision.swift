import Foundation

/// Whether the top rung (and the MP4) is the upload's own H.264, copied packet for packet, or
/// encoded like the other rungs — and the condition that decided it.
///
/// An upload the app already compressed (H.264 High/Main within the preset's level, 8-bit 4:2:0,
/// SDR BT.709, a constant frame rate equal to the preset's, IDRs at a regular interval no longer
/// than a segment, peak bitrate within the top rung's cap, already the top rung's size and
/// upright) only loses quality and costs two thirds of the encode work if encoded again. Its
/// packets are copied instead; it is still decoded once for the lower rungs, posters and preview,
/// which get IDRs at exactly the upload's IDR frames, so every rung stays aligned.
public struct TopRungDecision: Sendable, Codable, Equatable {
    public enum Mode: String, Sendable, Codable {
        case passthrough, encode
    }

    public var mode: Mode
    /// The condition that decided it, in words.
    public var reason: String
    /// Passthrough only: the output frames (from 0) holding the upload's IDRs.
    public var idrFrames: [Int]?
    /// Passthrough only: frames between the upload's IDRs (its length when it has one IDR).
    public var idrInterval: Int?

    static func encode(_ reason: String) -> TopRungDecision {
        TopRungDecision(mode: .encode, reason: reason, idrFrames: nil, idrInterval: nil)
    }

    /// Decides for one planned ladder. Pure: reads the probe (with its packet scan) and the preset.
    static func decide(clips: [PlannedClip], top: TranscodePlan.PlannedRung, rungCount: Int, preset: Preset) -> TopRungDecision {
        let fps = Double(preset.video.frameRate)
        guard preset.video.passthrough else { return .encode("turned off by the preset (video.passthrough)") }
        guard clips.count == 1, let clip = clips.first else { return .encode("\(clips.count) clips are joined") }
        guard clip.startFrame == 0, clip.endFrame == nil else { return .encode("the clip is trimmed") }
        guard rungCount > 1 else { return .encode("the ladder has one rung") }
        guard let video = clip.source.video else { return .encode("no video stream") }
        guard video.codec == "h264" else { return .encode("codec \(video.codec), not H.264") }
        let profile = video.profile ?? "unknown"
        guard profile == "High" || profile == "Main" else { return .encode("H.264 profile \(profile), not High or Main") }
        guard let level = video.level, level <= TranscodePlan.levelIDC(preset.video.level) else {
            return .encode("H.264 level \(video.level.map { String(Double($0) / 10) } ?? "unknown") above the preset's \(preset.video.level)")
        }
        guard video.pixelFormat == "yuv420p", video.bitDepth == 8, !video.isFullRange else {
            return .encode("pixel format \(video.pixelFormat) \(video.colorRange ?? "") range, not 8-bit yuv420p TV range")
        }
        if let aspect = video.pixelAspect, abs(aspect - 1) > 0.001 {
            return .encode(String(format: "pixels are not square (aspect %.3f)", aspect))
        }
        guard video.interlaced != true else { return .encode("interlaced") }
        let untagged: Set = ["unknown", "unspecified", "reserved", ""]
        guard video.dynamicRange == .sdr, video.effectiveColorMatrix == "bt709", !video.dolbyVision,
              untagged.contains(video.colorTransfer) || video.colorTransfer == "bt709",
              untagged.contains(video.colorPrimaries) || video.colorPrimaries == "bt709" else {
            return .encode("colour \(video.colorPrimaries)/\(video.colorTransfer)/\(video.colorSpace), not SDR BT.709")
        }
        guard video.rotation == 0 else { return .encode("rotated \(video.rotation)° by its display matrix") }
        guard video.width == top.width, video.height == top.height else {
            return .encode("\(video.width)x\(video.height) is not the top rung's \(top.width)x\(top.height)")
        }
        guard let scan = video.packets, scan.frames > 1 else {
            return .encode("packets not copyable as they are (not avcC H.264, or empty, discarded, untimed or out-of-order samples, or in-band parameter sets)")
        }
        // Decided on the frames themselves: headers can understate the length, and a trimmed
        // timeline would end the copied rung later than the others.
        guard scan.frames <= Admission(limits: preset.limits).maxFrames(frameRate: preset.video.frameRate) else { return .encode("longer than the duration limit") }
        // Every frame within half a frame of the preset's grid, however the deviations add up
        // (29.97 fps drifts a frame in 33 s, and the lower rungs follow the grid).
        let frame = 1 / fps
        let deviation = max(abs(scan.minFrameSeconds - frame), abs(scan.maxFrameSeconds - frame))
        guard deviation * Double(scan.frames) < frame / 2 else {
            return .encode(String(format: "frame intervals %.1f–%.1f ms, not a constant %.0f fps",
                                  scan.minFrameSeconds * 1000, scan.maxFrameSeconds * 1000, fps))
        }
        guard abs(scan.firstFrameSeconds) < frame / 2 else {
            return .encode(String(format: "video starts at %.3f s, not with the presentation", scan.firstFrameSeconds))
        }
        let idrs = scan.idrSeconds.map { Int(($0 * fps).rounded()) }
        guard idrs.first == 0 else { return .encode("the first frame is not an IDR") }
        let intervals = Set(zip(idrs.dropFirst(), idrs).map { $0 - $1 })
        let segment = preset.video.segmentSeconds * preset.video.frameRate
        let gop = intervals.max() ?? scan.frames
        guard intervals.count <= 1 else {
            return .encode("IDR intervals vary (\(intervals.min()!)–\(gop) frames)")
        }
        guard gop * 2 >= preset.video.frameRate else {
            return .encode("IDR every \(gop) frames, more often than every 0.5 s")
        }
        guard gop <= segment else {
            return .encode(String(format: "IDR every %.2f s, longer than a %d s segment", Double(gop) / fps, preset.video.segmentSeconds))
        }
        guard scan.frames - idrs[idrs.count - 1] <= gop else {
            return .encode(String(format: "no IDR in the last %.2f s", Double(scan.frames - idrs[idrs.count - 1]) / fps))
        }
        guard scan.peakKbps <= top.maxrateKbps else {
            return .encode("peak \(scan.peakKbps) kbit/s over 1 s, above the top rung's \(top.maxrateKbps) kbit/s cap")
        }
        return TopRungDecision(
            mode: .passthrough,
            reason: String(format: "H.264 %@@%.1f %dx%d %.0f fps, IDR every %.2f s, peak %d kbit/s: meets the top rung",
                           profile, Double(level) / 10, video.width, video.height, fps, Double(gop) / fps, scan.peakKbps),
            idrFrames: idrs, idrInterval: gop)
    }

    /// Segment starts chosen among the upload's IDR frames, following the planned lengths
    /// (`initial`, then `target` seconds): a segment ends at the first IDR at or past its planned
    /// length, or earlier when waiting for the next IDR (or the end, at `frames`) would make it
    /// longer than `target`.
    static func segmentStarts(idrFrames: [Int], frames: Int, initial: [Double], target: Int, frameRate: Int) -> [Int] {
        guard let first = idrFrames.first else { return [0] }
        var starts = [first]
        let longest = target * frameRate
        for (index, idr) in idrFrames.enumerated().dropFirst() {
            let planned = starts.count <= initial.count
                ? Int((initial[starts.count - 1] * Double(frameRate)).rounded()) : longest
            let length = idr - starts[starts.count - 1]
            let next = (index + 1 < idrFrames.count ? idrFrames[index + 1] : frames) - starts[starts.count - 1]
            if length >= planned || next > longest { starts.append(idr) }
        }
        return starts
    }
}
