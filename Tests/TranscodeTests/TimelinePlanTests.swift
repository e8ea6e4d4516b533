import Foundation
import Testing
@testable import Transcode

/// Plans for uploads of several clips and a sound track, checked as values (no FFmpeg).
@Suite struct TimelinePlanTests {
    let portrait = probe(width: 1080, height: 1920, duration: 10, path: "up/a.mp4")
    let landscape60 = probe(width: 1280, height: 720, fps: 60, duration: 5, path: "up/b.mp4")
    let silentSquare = probe(width: 480, height: 480, duration: 4, audio: false, path: "up/c.mp4")
    let song = SourceProbe(path: "up/song.m4a", container: "mov,mp4", durationSeconds: 30, sizeBytes: 500_000, streamCount: 1,
                           video: nil, audio: AudioStreamInfo(codec: "aac", sampleRate: 44100, channels: 2))

    func plan(_ clips: [ClipSource], _ probes: [SourceProbe], music: MusicSource? = nil, preset: Preset = .builtIn) throws -> TranscodePlan {
        try TranscodePlan.make(clips: clips, probes: probes, music: music, musicProbe: music == nil ? nil : song, preset: preset)
    }

    var three: [ClipSource] {
        [ClipSource(path: "up/a.mp4"), ClipSource(path: "up/b.mp4", startSeconds: 0.5, endSeconds: 3.2), ClipSource(path: "up/c.mp4")]
    }

    @Test func frameIsTheFirstClipsAndEveryClipIsFittedIntoIt() throws {
        let p = try plan(three, [portrait, landscape60, silentSquare])
        #expect(p.displayWidth == 1080 && p.displayHeight == 1920)
        #expect(p.rungs.map(\.name) == ["234p", "360p", "720p", "1080p"])
        for clip in p.clips {
            let graph = p.clipVideoFilter(clip)
            #expect(graph.contains("scale=w=1080:h=1920:force_original_aspect_ratio=decrease"))
            #expect(graph.contains("pad=w=1080:h=1920:x=(ow-iw)/2:y=(oh-ih)/2"))
            #expect(graph.hasSuffix("setsar=1,format=yuv420p[out0]"))
        }
        #expect(p.estimatedSeconds == 10 + 2.7 + 4)
        // Joined clips reach the fan-out as TV-range 4:2:0: the 1080p rung scaler passes frames through.
        #expect(p.videoFilterGraph.contains("scale=w=1080:h=1920:flags=bicubic,format=yuv420p"))
        // A single limited-range clip too; only a full-range one is converted, once per rung.
        let single = try plan([ClipSource(path: "up/a.mp4")], [portrait])
        #expect(single.videoFilterGraph.contains("scale=w=1080:h=1920:flags=bicubic,format=yuv420p"))
        var full = portrait
        full.video?.colorRange = "pc"
        let fullRange = try plan([ClipSource(path: "up/a.mp4")], [full])
        #expect(fullRange.videoFilterGraph.contains("scale=w=1080:h=1920:flags=bicubic:out_range=tv,"))
    }

    @Test func fillPolicyCropsInsteadOfPadding() throws {
        var preset = Preset.builtIn
        preset.video.clipFit = .fill
        let p = try plan(three, [portrait, landscape60, silentSquare], preset: preset)
        let graph = p.clipVideoFilter(p.clips[1])
        #expect(graph.contains("force_original_aspect_ratio=increase"))
        #expect(graph.contains("crop=w=1080:h=1920"))
        #expect(!graph.contains("pad="))
    }

    @Test func aLargeFirstClipSetsAFrameCappedAtTheTopRung() throws {
        let uhd = probe(width: 3840, height: 2160, rotation: 90, duration: 5, path: "up/4k.mp4")
        let p = try plan([ClipSource(path: "up/4k.mp4"), ClipSource(path: "up/b.mp4")], [uhd, landscape60])
        #expect(p.displayWidth == 1080 && p.displayHeight == 1920)
    }

    @Test func trimsAreCutOnTheFrameGridInBothStreams() throws {
        let p = try plan(three, [portrait, landscape60, silentSquare])
        let trimmed = p.clips[1]
        #expect(trimmed.startFrame == 15 && trimmed.endFrame == 96)
        // The reader starts both streams at the trim start; the graphs cut 81 frames = 129600 samples.
        #expect(p.clipVideoFilter(trimmed).contains("fps=fps=30:start_time=0,trim=end_pts=81,"))
        #expect(p.clipAudioFilter(trimmed).hasSuffix("atrim=end_pts=129600[out0]"))
        #expect(p.samples(forFrames: 219) == 350_400)
    }

    @Test func clipsWithoutSoundContributeSilenceAndTheOthersAreMixed() throws {
        let p = try plan(three, [portrait, landscape60, silentSquare])
        #expect(p.audio.clipSound)
        #expect(p.clips.map(\.usesSound) == [true, true, false])
        #expect(p.audioFilterGraph.hasPrefix("[in0]loudnorm="))
    }

    @Test func musicReplacesOrMixesAtItsGains() throws {
        let replace = try plan(three, [portrait, landscape60, silentSquare], music: MusicSource(path: "up/song.m4a", musicGainDB: -3))
        #expect(!replace.audio.clipSound && replace.clips.allSatisfy { !$0.usesSound })
        #expect(replace.audioFilterGraph.hasPrefix("[in0]volume=volume=-3.0dB,loudnorm="))

        let mix = try plan(three, [portrait, landscape60, silentSquare],
                           music: MusicSource(path: "up/song.m4a", offsetSeconds: 12, mode: .mix, clipGainDB: 0, musicGainDB: -6))
        #expect(mix.mixInputs.clipSound == 0 && mix.mixInputs.music == 1)
        #expect(mix.audioFilterGraph.contains("[in1]volume=volume=-6.0dB[m]"))
        #expect(mix.audioFilterGraph.contains("amerge=inputs=2,pan=stereo|c0=c0+c2|c1=c1+c3"))
        #expect(mix.musicFilter?.contains("atrim=start_pts=576000") == true)
    }

    @Test func joinedLengthIsLimitedOrTrimmedPerPreset() throws {
        let long = probe(width: 1080, height: 1920, duration: 40, path: "up/long.mp4")
        let clips = [ClipSource(path: "up/long.mp4"), ClipSource(path: "up/long.mp4")]
        #expect(throws: TranscodeError.limitExceeded(path: "up", limit: "duration", measured: "80.00 s (2 clips joined, from headers)",
                                                     allowed: "60 s")) {
            try plan(clips, [long, long])
        }
        var preset = Preset.builtIn
        preset.limits.overLength = .trim
        let trimmed = try plan(clips, [long, long], preset: preset)
        #expect(trimmed.estimatedSeconds == 60)
        #expect(trimmed.maxFrames == 1800)
    }

    @Test func sizeCountsEveryFileOfTheUpload() throws {
        var big = portrait
        big.sizeBytes = 30 * 1024 * 1024
        #expect(throws: TranscodeError.limitExceeded(path: "up", limit: "size", measured: "\(60 * 1024 * 1024 + 2_000_000) bytes",
                                                     allowed: "\(50 * 1024 * 1024) bytes")) {
            try plan([ClipSource(path: "up/a.mp4"), ClipSource(path: "up/a.mp4"), ClipSource(path: "up/b.mp4"), ClipSource(path: "up/c.mp4")],
                     [big, big, landscape60, silentSquare])
        }
    }

    @Test func trimPastTheEndAndTooManyClipsAreRefused() throws {
        #expect(throws: TranscodeError.badTrim(path: "up/b.mp4", detail: "start 6.000 s is at or past the end of the clip (5.000 s)")) {
            try plan([ClipSource(path: "up/b.mp4", startSeconds: 6)], [landscape60])
        }
        var preset = Preset.builtIn
        preset.limits.maxClips = 2
        #expect(throws: TranscodeError.limitExceeded(path: "up", limit: "clips", measured: "3 clips", allowed: "2")) {
            try plan(three, [portrait, landscape60, silentSquare], preset: preset)
        }
    }

    @Test func olderPresetsWithoutTheNewFieldsStillLoad() throws {
        var object = try #require(try JSONSerialization.jsonObject(with: Preset.builtIn.canonicalJSON()) as? [String: Any])
        var video = try #require(object["video"] as? [String: Any]), limits = try #require(object["limits"] as? [String: Any])
        video["clipFit"] = nil
        limits["maxClips"] = nil
        limits["overLength"] = nil
        object["video"] = video
        object["limits"] = limits
        let json = try JSONSerialization.data(withJSONObject: object)
        #expect(!String(decoding: json, as: UTF8.self).contains("clipFit"))
        let preset = try Preset.decode(json, source: "old.json")
        #expect(preset == .builtIn)
    }
}

extension TimelinePlanTests {
    @Test func joinedClipsShareA916Or169Frame() throws {
        let fourThree = probe(width: 640, height: 480, duration: 3, path: "up/43.mp4")
        let p = try plan([ClipSource(path: "up/43.mp4"), ClipSource(path: "up/a.mp4")], [fourThree, portrait])
        #expect(p.displayWidth == 854 && p.displayHeight == 480, "landscape first clip: 16:9 at its short side")
        let square = probe(width: 642, height: 642, duration: 3, path: "up/sq.mp4")
        let q = try plan([ClipSource(path: "up/sq.mp4"), ClipSource(path: "up/b.mp4")], [square, landscape60])
        #expect(q.displayWidth == 642 && q.displayHeight == 1142, "square first clip: portrait 9:16")
        let single = try plan([ClipSource(path: "up/43.mp4")], [fourThree])
        #expect(single.displayWidth == 640 && single.displayHeight == 480, "one clip keeps its own shape")
    }
}
