import Testing
@testable import Transcode

func probe(width: Int, height: Int, rotation: Int = 0, fps: Double = 30, transfer: String = "bt709",
                   duration: Double = 10, audio: Bool = true, path: String = "clip.mp4") -> SourceProbe {
    SourceProbe(path: path, container: "mov,mp4", durationSeconds: duration, sizeBytes: 1_000_000, streamCount: 2,
                video: VideoStreamInfo(codec: "h264", width: width, height: height, rotation: rotation, frameRate: fps,
                                       colorTransfer: transfer),
                audio: audio ? AudioStreamInfo(codec: "aac", sampleRate: 44100, channels: 1) : nil)
}

@Suite struct TranscodePlanTests {
    @Test func portraitLadderIsSizedByShortSide() throws {
        let plan = try TranscodePlan.make(probe: probe(width: 1080, height: 1920), preset: .builtIn)
        #expect(plan.rungs.map { "\($0.width)x\($0.height)" } == ["234x416", "360x640", "720x1280", "1080x1920"])
        #expect(plan.rungs.map(\.name) == ["234p", "360p", "720p", "1080p"])
        // The cellular-safe bottom carries lighter sound: one AAC encode per bitrate, one mix.
        #expect(plan.rungs.map(\.audioBitrateKbps) == [32, 64, 128, 128])
        #expect(plan.audioBitratesKbps == [32, 64, 128])
        #expect(plan.rungs[0].maxrateKbps + plan.rungs[0].audioBitrateKbps <= 300, "the bottom rung fits a 3G link with room")
        // Only the startup rung starts with its rate buffer partly full; the others as x264 does.
        #expect(plan.rungs.map(\.initialBufferFill) == [0.1, nil, nil, nil])
    }

    @Test func rotatedLandscapeCodedSourceBecomesPortrait() throws {
        let plan = try TranscodePlan.make(probe: probe(width: 3840, height: 2160, rotation: 90, fps: 60), preset: .builtIn)
        #expect(plan.displayWidth == 2160 && plan.displayHeight == 3840)
        #expect(plan.topRung.width == 1080 && plan.topRung.height == 1920)
        let normalise = plan.clipVideoFilter(plan.clips[0])
        #expect(normalise.contains("transpose=clock"))
        #expect(normalise.hasPrefix("[in0]fps=fps=30:start_time=0,"))
        #expect(!normalise.contains("pad="), "a single clip is not conformed: rung scalers do the only resize")
    }

    @Test func neverUpscalesButAlwaysHasALowestRung() throws {
        let small = try TranscodePlan.make(probe: probe(width: 320, height: 568), preset: .builtIn)
        #expect(small.rungs.map(\.name) == ["234p", "320p"])
        #expect(small.topRung.width == 320 && small.topRung.height == 568)

        let qhd = try TranscodePlan.make(probe: probe(width: 960, height: 540), preset: .builtIn)
        #expect(qhd.rungs.map(\.name) == ["234p", "360p", "540p"])
        #expect(qhd.topRung.width == 960)

        let nearly = try TranscodePlan.make(probe: probe(width: 642, height: 362), preset: .builtIn)
        #expect(nearly.rungs.map(\.name) == ["234p", "360p"])

        let tiny = try TranscodePlan.make(probe: probe(width: 200, height: 356), preset: .builtIn)
        #expect(tiny.rungs.map(\.name) == ["200p"] && tiny.topRung.width == 200)
    }

    @Test func oddSizesBecomeEven() throws {
        let plan = try TranscodePlan.make(probe: probe(width: 643, height: 641), preset: .builtIn)
        for rung in plan.rungs { #expect(rung.width % 2 == 0 && rung.height % 2 == 0) }
        for poster in plan.posters { #expect(poster.width % 2 == 0 && poster.height % 2 == 0) }
    }

    @Test func hdrSourcesAreToneMapped() throws {
        let hlg = try TranscodePlan.make(probe: probe(width: 1920, height: 1080, transfer: "arib-std-b67"), preset: .builtIn)
        #expect(hlg.clips[0].toneMapFrom == .hlg)
        #expect(hlg.clipVideoFilter(hlg.clips[0]).contains("zscale=tin=arib-std-b67"))
        #expect(hlg.clipVideoFilter(hlg.clips[0]).contains("tonemap=tonemap=hable"))
        let pq = try TranscodePlan.make(probe: probe(width: 1920, height: 1080, transfer: "smpte2084"), preset: .builtIn)
        #expect(pq.clipVideoFilter(pq.clips[0]).contains("zscale=tin=smpte2084"))
        let sdr = try TranscodePlan.make(probe: probe(width: 1920, height: 1080), preset: .builtIn)
        #expect(!sdr.clipVideoFilter(sdr.clips[0]).contains("tonemap"))
    }

    /// Another matrix is converted once, in YUV (`colorspace`) where that filter takes the frames,
    /// through swscale otherwise (full range); BT.709 is left alone.
    @Test func otherMatricesAreConvertedToBT709InYUV() throws {
        func filter(space: String, format: String = "yuv420p", range: String? = nil, height: Int = 1080) throws -> String {
            var source = probe(width: 1920, height: height)
            source.video?.colorSpace = space
            source.video?.pixelFormat = format
            source.video?.colorRange = range
            let plan = try TranscodePlan.make(probe: source, preset: .builtIn)
            return plan.clipVideoFilter(plan.clips[0])
        }
        #expect(try filter(space: "smpte170m").contains("colorspace=ispace=bt470bg:iprimaries=bt709:itrc=bt709:irange=tv:space=bt709"))
        #expect(try filter(space: "smpte170m").contains("fast=1"))
        #expect(try filter(space: "unknown", height: 480).contains("colorspace=ispace=bt470bg"), "untagged SD is BT.601")
        #expect(try filter(space: "bt2020nc", format: "yuv420p10le").contains("colorspace=ispace=bt2020nc"))
        #expect(try filter(space: "bt470bg", format: "yuvj420p").contains("scale=in_color_matrix=bt601:out_color_matrix=bt709"))
        #expect(try filter(space: "bt470bg", range: "pc").contains("scale=in_color_matrix=bt601"))
        #expect(try filter(space: "bt2020nc", format: "nv12").contains("scale=in_color_matrix=bt2020:"))
        let bt709 = try filter(space: "bt709")
        #expect(!bt709.contains("colorspace") && !bt709.contains("color_matrix"))
    }

    @Test func segmentsStartShortThenSettleAtTarget() throws {
        let plan = try TranscodePlan.make(probe: probe(width: 1920, height: 1080, duration: 30), preset: .builtIn)
        let starts = (0..<900).filter(plan.startsSegment(frame:))
        // 0.5 s, 0.5 s, then 1 s segments (`#EXT-X-TARGETDURATION:1`, for a video that grows while played).
        #expect(starts == [0, 15] + Array(stride(from: 30, to: 900, by: 30)))
        // Every segment start is a keyframe, and nothing else is (a keyframe every second, plus 0.5 s).
        #expect((0..<900).filter(plan.isKeyframe(frame:)) == starts)
        // A preset's own layout: 0.5 s, 1 s, 2.5 s, then 6 s with a 2 s GOP.
        var long = Preset.builtIn
        long.video.gopSeconds = 2
        long.video.segmentSeconds = 6
        long.video.initialSegmentSeconds = [0.5, 1, 2.5]
        let longPlan = try TranscodePlan.make(probe: probe(width: 1920, height: 1080, duration: 30), preset: long)
        let longStarts = (0..<900).filter(longPlan.startsSegment(frame:))
        #expect(longStarts == [0, 15, 45, 120, 300, 480, 660, 840])
        for start in longStarts { #expect(longPlan.isKeyframe(frame: start)) }
        #expect((0..<900).filter(longPlan.isKeyframe(frame:)) == (Array(stride(from: 0, to: 900, by: 60)) + [15, 45]).sorted())
    }

    @Test func silentTrackWhenSourceHasNoAudio() throws {
        let plan = try TranscodePlan.make(probe: probe(width: 640, height: 360, audio: false), preset: .builtIn)
        #expect(plan.audio.clipSound == false)
        #expect(plan.audioFilterGraph.hasPrefix("anullsrc="))
    }

    @Test func limitsRejectWithMeasuredValueAndLimit() {
        #expect(throws: TranscodeError.limitExceeded(path: "clip.mp4", limit: "duration", measured: "75.00 s", allowed: "60 s")) {
            try TranscodePlan.make(probe: probe(width: 1080, height: 1920, duration: 75), preset: .builtIn)
        }
        #expect(throws: TranscodeError.limitExceeded(path: "clip.mp4", limit: "frame_rate", measured: "10000.0 fps", allowed: "240 fps")) {
            try TranscodePlan.make(probe: probe(width: 640, height: 360, fps: 10000), preset: .builtIn)
        }
        var audioOnly = probe(width: 640, height: 360)
        audioOnly.video = nil
        #expect(throws: TranscodeError.noVideoStream(path: "clip.mp4")) {
            try TranscodePlan.make(probe: audioOnly, preset: .builtIn)
        }
    }

    /// The preview loop keeps the top rung's shape at the preset's short side (never above the
    /// top rung's), with even sides; turned off, its branch and sink are gone.
    @Test func smallerRungsAreScaledFromTheNextLargerOne() throws {
        let plan = try TranscodePlan.make(probe: probe(width: 1080, height: 1920), preset: .builtIn)
        let chains = plan.videoFilterGraph.split(separator: ";").map(String.init)
        #expect(chains.first == "[in0]split=3[s0][s1][s2]", "the timeline feeds the largest rung, the poster and the storyboard")
        let inputs = ["1080x1920": "[s0]", "720x1280": "[c2]", "360x640": "[c1]", "234x416": "[c0]"]
        for (size, input) in inputs {
            let parts = size.split(separator: "x")
            #expect(chains.contains { $0.hasPrefix("\(input)scale=w=\(parts[0]):h=\(parts[1]):flags=bicubic,") }, "\(size) from \(input)")
        }
        #expect(chains.contains { $0.contains("scale=w=720:h=1280") && $0.hasSuffix("split=2[out2][c1]") })
        #expect(chains.contains { $0.contains("scale=w=234:h=416") && $0.hasSuffix("[out0]") })
    }

    @Test func previewIsPlannedAtTheRungsAspect() throws {
        let portrait = try #require(try TranscodePlan.make(probe: probe(width: 1080, height: 1920), preset: .builtIn).preview)
        #expect(portrait == .init(width: 240, height: 426, fps: 12, frames: 36, maxBytes: 300_000))
        let plan = try TranscodePlan.make(probe: probe(width: 3840, height: 2160, rotation: 90), preset: .builtIn)
        #expect(plan.preview.map { "\($0.width)x\($0.height)" } == "240x426")
        let odd = try TranscodePlan.make(probe: probe(width: 643, height: 361), preset: .builtIn)
        #expect(odd.preview.map { "\($0.width)x\($0.height)" } == "426x240")
        let tiny = try TranscodePlan.make(probe: probe(width: 200, height: 150), preset: .builtIn)
        #expect(tiny.preview.map { "\($0.width)x\($0.height)" } == "200x150", "capped at the top rung")
        #expect(plan.previewSinkIndex == plan.rungs.count + 2 && plan.videoSinkCount == plan.rungs.count + 4)
        #expect(plan.videoFilterGraph.contains("[p]fps=fps=12:start_time=0:round=up,scale=w=240:h=426"),
                "the preview is scaled from the 360p rung's frames")
        var preset = Preset.builtIn
        preset.preview = .init(enabled: true, seconds: 5, fps: 10, shortSide: 320, maxBytes: 100_000)
        let custom = try #require(try TranscodePlan.make(probe: probe(width: 1920, height: 1080), preset: preset).preview)
        #expect(custom == .init(width: 568, height: 320, fps: 10, frames: 50, maxBytes: 100_000))
        preset.preview.enabled = false
        let off = try TranscodePlan.make(probe: probe(width: 1920, height: 1080), preset: preset)
        #expect(off.preview == nil && off.previewSinkIndex == nil && off.videoSinkCount == off.rungs.count + 3)
        #expect(!off.videoFilterGraph.contains("fps=fps=10"))
    }

    /// Candidates reach the poster picker at the largest poster's size; `signalstats` scores a
    /// copy a quarter as wide, paired with its candidate by sink.
    @Test func posterCandidatesAreScoredOnAQuarterSizeCopy() throws {
        let plan = try TranscodePlan.make(probe: probe(width: 1080, height: 1920), preset: .builtIn)
        #expect(plan.posters.last.map { "\($0.width)x\($0.height)" } == "720x1280")
        #expect(plan.videoFilterGraph.contains("scale=w=720:h=1280:out_range=tv,format=yuv420p,split=2[out\(plan.posterSinkIndex)][ps];"))
        #expect(plan.videoFilterGraph.contains("[ps]scale=w=180:h=320:out_range=tv,format=yuv420p,signalstats[out\(plan.posterStatisticsSinkIndex)]"))
        #expect(plan.posterStatisticsSinkIndex == plan.videoSinkCount - 1)
    }

    /// At least eight poster candidates over any clip, one a second at most apart over long ones.
    @Test func posterCandidatesCoverShortClips() throws {
        #expect(try TranscodePlan.make(probe: probe(width: 640, height: 360, duration: 1.2), preset: .builtIn).posterStep == 4)
        #expect(try TranscodePlan.make(probe: probe(width: 640, height: 360, duration: 0.1), preset: .builtIn).posterStep == 1)
        #expect(try TranscodePlan.make(probe: probe(width: 640, height: 360, duration: 5), preset: .builtIn).posterStep == 18)
        #expect(try TranscodePlan.make(probe: probe(width: 640, height: 360, duration: 60), preset: .builtIn).posterStep == 30)
        #expect(try TranscodePlan.make(probe: probe(width: 640, height: 360, duration: 0), preset: .builtIn).posterStep == 30)
        let plan = try TranscodePlan.make(probe: probe(width: 640, height: 360, duration: 1.2), preset: .builtIn)
        #expect(plan.videoFilterGraph.contains("select='eq(mod(n,4),2)'"))
    }

    @Test func storyboardCoversTheDuration() throws {
        let plan = try TranscodePlan.make(probe: probe(width: 1080, height: 1920, duration: 23.4), preset: .builtIn)
        #expect(plan.storyboard.columns * plan.storyboard.rows >= 24)
        #expect(plan.storyboard.cellWidth == 90 && plan.storyboard.cellHeight == 160)
        let vtt = Storyboard.webVTT(sprite: "s.jpg", duration: 23.4, storyboard: plan.storyboard)
        #expect(vtt.hasPrefix("WEBVTT\n"))
        #expect(vtt.contains("00:00:23.000 --> 00:00:23.400\ns.jpg#xywh=270,320,90,160"))
    }

    @Test func rotationFromDisplayMatrix() {
        #expect(VideoStreamInfo.clockwiseRotation(fromDisplayMatrixDegrees: -90) == 90)
        #expect(VideoStreamInfo.clockwiseRotation(fromDisplayMatrixDegrees: 90) == 270)
        #expect(VideoStreamInfo.clockwiseRotation(fromDisplayMatrixDegrees: 180) == 180)
        #expect(VideoStreamInfo.clockwiseRotation(fromDisplayMatrixDegrees: .nan) == 0)
    }
}
