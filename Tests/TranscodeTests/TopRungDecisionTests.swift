import Testing
@testable import Transcode

/// The passthrough decision as a value: which uploads keep their own H.264 as the top rung, and
/// the reason given when one does not.
@Suite struct TopRungDecisionTests {
    /// An app upload: 1080x1920 H.264 High@4.0 at 30 fps, IDR every `gop` frames, `seconds` long.
    static func app(seconds: Int = 20, gop: Int = 30, peakKbps: Int = 3500, fps: Double = 30,
                    edit: (inout VideoStreamInfo) -> Void = { _ in }) -> SourceProbe {
        let frames = seconds * 30
        var video = VideoStreamInfo(codec: "h264", width: 1080, height: 1920, frameRate: fps, profile: "High", level: 40,
                                    packets: VideoPacketScan(frames: frames, firstFrameSeconds: 0, minFrameSeconds: 1 / fps,
                                                             maxFrameSeconds: 1 / fps,
                                                             idrSeconds: stride(from: 0, to: frames, by: gop).map { Double($0) / 30 },
                                                             peakKbps: peakKbps))
        edit(&video)
        return SourceProbe(path: "app.mp4", container: "mov,mp4,m4a,3gp,3g2,mj2", durationSeconds: Double(seconds),
                           sizeBytes: 7_000_000, streamCount: 2, video: video,
                           audio: AudioStreamInfo(codec: "aac", sampleRate: 48000, channels: 2))
    }

    static func reason(_ probe: SourceProbe, preset: Preset = .builtIn) throws -> String {
        let plan = try TranscodePlan.make(probe: probe, preset: preset)
        #expect(plan.topRungDecision.mode == .encode)
        return plan.topRungDecision.reason
    }

    @Test func appUploadIsPassedThroughWithLowerRungsKeyedAtItsIDRs() throws {
        let plan = try TranscodePlan.make(probe: Self.app(), preset: .builtIn)
        #expect(plan.topRungDecision.mode == .passthrough, "\(plan.topRungDecision.reason)")
        #expect(plan.encodedRungs.map(\.name) == ["234p", "360p", "720p"])
        #expect(plan.videoFilterGraph.components(separatedBy: "scale=w=").count - 1 == 3 + 4,
                "three rung scalers plus poster, poster statistics, storyboard and preview: \(plan.videoFilterGraph)")
        #expect(plan.posterSinkIndex == 3)
        #expect((0..<600).filter(plan.isKeyframe(frame:)) == Array(stride(from: 0, to: 600, by: 30)))
        // 0.5 s, 0.5 s, then 1 s, each rounded up to the next IDR: a segment per IDR.
        #expect((0..<600).filter(plan.startsSegment(frame:)) == Array(stride(from: 0, to: 600, by: 30)))
        #expect(plan.gopFrames == 30)
    }

    @Test func eachConditionThatFailsIsNamed() throws {
        #expect(try Self.reason(Self.app { $0.rotation = 90 }).contains("rotated 90°"))
        #expect(try Self.reason(Self.app(fps: 30000 / 1001.0)).contains("not a constant 30 fps"))
        #expect(try Self.reason(Self.app(peakKbps: 6500)).contains("above the top rung's 6000 kbit/s cap"))
        #expect(try Self.reason(Self.app(gop: 60)).contains("IDR every 2.00 s, longer than a 1 s segment"))
        #expect(try Self.reason(Self.app { $0.level = 51 }).contains("level 5.1 above the preset's 4.1"))
        #expect(try Self.reason(Self.app { $0.profile = "Constrained Baseline" }).contains("not High or Main"))
        #expect(try Self.reason(Self.app { $0.colorTransfer = "arib-std-b67" }).contains("not SDR BT.709"))
        #expect(try Self.reason(Self.app { $0.pixelFormat = "yuvj420p" }).contains("pixel format yuvj420p"))
        #expect(try Self.reason(Self.app { $0.codec = "hevc"; $0.packets = nil }).contains("codec hevc"))
        #expect(try Self.reason(Self.app { $0.width = 1440; $0.height = 2560 }).contains("is not the top rung's 1080x1920"))
        #expect(try Self.reason(Self.app { $0.packets?.idrSeconds = [0, 1, 2, 2.5, 3.5] }).contains("IDR intervals vary"))
        #expect(try Self.reason(Self.app { $0.packets?.idrSeconds = [0, 1, 2] }).contains("no IDR in the last"))
        #expect(try Self.reason(Self.app { $0.packets?.firstFrameSeconds = 0.1 }).contains("video starts at 0.100 s"))
        #expect(try Self.reason(Self.app { $0.packets = nil }).contains("packets not copyable"))
        #expect(try Self.reason(Self.app { $0.pixelAspect = 4.0 / 3 }).contains("pixels are not square"))
        #expect(try Self.reason(Self.app { $0.interlaced = true }) == "interlaced")
        #expect(try Self.reason(Self.app { $0.colorRange = "pc" }).contains("not 8-bit yuv420p TV range"))
        #expect(try Self.reason(Self.app(gop: 1)).contains("more often than every 0.5 s"))
        var trim = Preset.builtIn
        trim.limits.overLength = .trim
        #expect(try Self.reason(Self.app(seconds: 70), preset: trim) == "longer than the duration limit")

        let joined = try TranscodePlan.make(clips: [ClipSource(path: "a.mp4"), ClipSource(path: "b.mp4")],
                                            probes: [Self.app(), Self.app()], preset: .builtIn)
        #expect(joined.topRungDecision.reason == "2 clips are joined")
        let trimmed = try TranscodePlan.make(clips: [ClipSource(path: "app.mp4", startSeconds: 1)], probes: [Self.app()], preset: .builtIn)
        #expect(trimmed.topRungDecision.reason == "the clip is trimmed")
    }

    /// A short clip with its only IDR at the start: the lower rungs get no IDR the upload lacks.
    @Test func singleIDRClipKeepsOneGOP() throws {
        var sixSeconds = Preset.builtIn
        sixSeconds.video.gopSeconds = 2
        sixSeconds.video.segmentSeconds = 6
        let plan = try TranscodePlan.make(probe: Self.app(seconds: 4, gop: 120), preset: sixSeconds)
        #expect(plan.topRungDecision.mode == .passthrough, "\(plan.topRungDecision.reason)")
        #expect(plan.gopFrames == 120)
        #expect((0..<120).filter(plan.isKeyframe(frame:)) == [0])
    }

    @Test func segmentsAtTheUploadsIDRsNeverExceedTheTarget() {
        // IDR every 4 s over 30 s: waiting for the IDR after 6 s would make an 8 s segment.
        let idrs = Array(stride(from: 0, to: 900, by: 120))
        let starts = TopRungDecision.segmentStarts(idrFrames: idrs, frames: 900, initial: [0.5, 1, 2.5], target: 6, frameRate: 30)
        let lengths = zip(starts.dropFirst() + [900], starts).map { $0 - $1 }
        #expect(starts == [0, 120, 240, 360, 480, 600, 720])
        #expect(lengths.allSatisfy { $0 <= 180 })
        // IDR every 2 s: 0.5 → 2, 1 → 2, 2.5 → 4, then 6.
        #expect(TopRungDecision.segmentStarts(idrFrames: Array(stride(from: 0, to: 900, by: 60)), frames: 900,
                                              initial: [0.5, 1, 2.5], target: 6, frameRate: 30) == [0, 60, 120, 240, 420, 600, 780])
    }
}
