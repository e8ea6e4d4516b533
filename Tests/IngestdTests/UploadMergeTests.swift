import IngestdTesting
import Foundation
import Testing
import Ingest
import Transcode

/// Joined uploads, measured from the outside: flash/beep sync marks at every join, the output
/// length against the sum of the trimmed clips, the sound track's placement, fade and loudness.
@Suite struct UploadMergeTests {
    static let frame = 1.0 / 30

    /// Four clips, each with a white flash and a beep at 1.0 s of its own timeline: portrait stored
    /// sideways (30 fps, 48 kHz stereo AAC), landscape 60 fps with 44.1 kHz mono (trimmed
    /// 0.5–1.8 s), a square VFR clip without audio, and VP9/Opus portrait at 25 fps.
    static func syncUpload(audio: String = "") async throws -> String {
        let x264 = ["-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p"]
        return try await Fixtures.shared.upload("sync\(audio.isEmpty ? "" : "-music-\(abs(audio.hashValue))")", files: [
            "rotated-a.mp4": SyncMarks.clip(width: 640, height: 360, fps: "30", seconds: 2, video: x264),
            "b.mp4": SyncMarks.clip(width: 640, height: 360, fps: "60", seconds: 2, sampleRate: 44100, channels: 1, video: x264),
            "c.mp4": SyncMarks.clip(width: 480, height: 480, fps: "60", seconds: 2, sampleRate: nil,
                                    video: ["-fps_mode", "vfr"] + x264, extraFilter: ",select='not(eq(mod(n\\,4)\\,1))'"),
            "d.webm": SyncMarks.clip(width: 360, height: 640, fps: "25", seconds: 2, video: ["-c:v", "libvpx-vp9", "-deadline", "realtime",
                                                                                             "-cpu-used", "8"], audio: ["-c:a", "libopus"]),
            "song.ogg": ["-f", "lavfi", "-i", "aevalsrc=0.2*sin(2*PI*(220+55*floor(t))*t):s=44100:d=3", "-ac", "2", "-c:a", "libvorbis"],
            "song.mp3": ["-f", "lavfi", "-i", "aevalsrc=0.2*sin(2*PI*(220+55*floor(t))*t):s=44100:d=3", "-ac", "2", "-c:a", "libmp3lame"],
            "song.m4a": ["-f", "lavfi", "-i", "aevalsrc=0.2*sin(2*PI*(220+55*floor(t))*t):s=48000:d=3", "-ac", "2", "-c:a", "aac"],
            "song.wav": ["-f", "lavfi", "-i", "aevalsrc=0.2*sin(2*PI*(220+55*floor(t))*t):s=22050:d=3", "-ac", "1"],
        ], manifest: """
            {"id": "sync", "clips": [{"file": "rotated-a.mp4"}, {"file": "b.mp4", "start": 0.5, "end": 1.8},
                                     {"file": "c.mp4"}, {"file": "d.webm"}]\(audio)}
            """)
    }

    @Test func joinsKeepSyncAndTheDurationIsTheSumOfTheClips() async throws {
        let output = try await Fixtures.shared.output(try await Self.syncUpload())
        let mp4 = "\(output.directory)/video.mp4"
        // 2 s + 1.3 s + 2 s + 2 s at 30 fps = 219 frames; the frame is the first clip's, upright.
        let frames = try Checks.frames(mp4)
        #expect(frames.count == 219)
        #expect(output.manifest.width == 360 && output.manifest.height == 640)
        let streams = try Checks.streams(mp4)
        let audio = try #require(streams.first { $0.string("codec_type") == "audio" }?.double("duration"))
        #expect(abs(audio - 7.3) <= Self.frame, "audio \(audio) s")

        let expected = [1.0, 2.0 + 0.5, 3.3 + 1.0, 5.3 + 1.0]
        let flashes = try SyncMarks.flashes(mp4)
        #expect(flashes.count == 4, "flashes \(flashes)")
        for (flash, time) in zip(flashes, expected) { #expect(abs(flash - time) <= Self.frame + 0.001, "flash at \(flash), expected \(time)") }
        // The third clip has no sound: its silence has exactly its length, so the fourth beep is on time.
        let beeps = try SyncMarks.beeps(mp4)
        #expect(beeps.count == 3, "beeps \(beeps)")
        for (beep, flash) in zip(beeps, [flashes[0], flashes[1], flashes[3]]) {
            #expect(abs(beep - flash) <= Self.frame, "A/V offset \(Int((beep - flash) * 1000)) ms at \(flash) s")
        }
        #expect(output.manifest.sources.count == 4)
        #expect(output.manifest.uploadID == "sync")
    }

    @Test func musicReplacesTheSoundLoopsAndFadesOut() async throws {
        let upload = try await Self.syncUpload(audio: #", "audio": {"file": "song.ogg", "offset": 0.5, "loop": true, "fadeOut": 1.0}"#)
        let output = try await Fixtures.shared.output(upload)
        let mp4 = "\(output.directory)/video.mp4"
        #expect(output.manifest.audio.music && !output.manifest.audio.clipSound)
        // The song has 2.5 s left after its offset; looped, it still plays at the end of the 7.3 s video.
        let middle = try SyncMarks.rms(mp4, from: 3.0, to: 5.5)
        let late = try SyncMarks.rms(mp4, from: 5.5, to: 6.0)
        let tail = try SyncMarks.rms(mp4, from: 7.2, to: 7.3)
        #expect(middle > 0.02, "looped music keeps playing: \(middle)")
        #expect(late > 0.02, "still playing before the fade: \(late)")
        #expect(tail < late / 4, "faded out at the end: \(tail) vs \(late)")
        #expect(try Checks.frames(mp4).count == 219)
    }

    @Test func withoutLoopTheTrackEndsInSilence() async throws {
        let upload = try await Self.syncUpload(audio: #", "audio": {"file": "song.ogg", "mode": "mix", "musicGain": -6, "fadeOut": 0}"#)
        let output = try await Fixtures.shared.output(upload)
        let mp4 = "\(output.directory)/video.mp4"
        #expect(output.manifest.audio.music && output.manifest.audio.clipSound)
        // The 3 s song plays under the clips, then only the clips' own sound remains: beeps still in sync.
        #expect(try SyncMarks.rms(mp4, from: 1.5, to: 2.4) > 0.01)
        #expect(try SyncMarks.rms(mp4, from: 3.5, to: 4.2) < 0.001)
        let flashes = try SyncMarks.flashes(mp4), beeps = try SyncMarks.beeps(mp4)
        #expect(beeps.count == 3, "beeps \(beeps)")
        for (beep, flash) in zip(beeps, [flashes[0], flashes[1], flashes[3]]) {
            #expect(abs(beep - flash) <= Self.frame, "A/V offset \(Int((beep - flash) * 1000)) ms at \(flash) s")
        }
    }

    @Test func theSampleUploadMixesMusicAtTheLoudnessTarget() async throws {
        let output = try await Fixtures.shared.output(Paths.sample("upload"))
        let mp4 = "\(output.directory)/video.mp4"
        #expect(try Checks.frames(mp4).count == 210)  // 3 s + 2 s (trimmed) + 2 s
        let loudness = try LoudnessTests.loudness(mp4)
        #expect(abs(loudness.integrated - -14) <= 1, "integrated \(loudness.integrated) LUFS")
        #expect(loudness.truePeak <= -1, "true peak \(loudness.truePeak) dBTP")
        #expect(output.manifest.metadata["tags"] == .array([.string("sample"), .string("sync-marks")]))
        let written = try JSONDecoder().decode(ReadyManifest.self, from: Data(contentsOf: URL(fileURLWithPath: "\(output.directory)/manifest.json")))
        #expect(written.metadata == output.manifest.metadata)
        #expect(written.music?.audio?.codec == "vorbis")
        let flashes = try SyncMarks.flashes(mp4), beeps = try SyncMarks.beeps(mp4)
        #expect(flashes.count == 3 && beeps.count == 2, "flashes \(flashes) beeps \(beeps)")
        for (beep, flash) in zip(beeps, flashes) { #expect(abs(beep - flash) <= Self.frame) }
    }

    @Test func overLengthIsRejectedWithTheJoinedDurationOrTrimmed() async throws {
        var preset = Preset.builtIn
        preset.limits.maxDurationSeconds = 5
        let upload = try await Self.syncUpload()
        let destination = Paths.scratch("over-length")
        await #expect(throws: TranscodeError.limitExceeded(path: upload, limit: "duration",
                                                           measured: "7.31 s (4 clips joined, from headers)", allowed: "5 s")) {
            _ = try await TranscodeJob(input: upload, destination: destination, preset: preset).run(logger: .init(label: "t"))
        }
        #expect(!FileManager.default.fileExists(atPath: destination))
        preset.limits.overLength = .trim
        let manifest = try await TranscodeJob(input: upload, destination: destination, preset: preset).run(logger: .init(label: "t"))
        #expect(manifest.trimmedToLimit)
        #expect(try Checks.frames("\(destination)/video.mp4").count == 150)
    }

    @Test func aTrackOffsetPastItsEndIsRefusedNamingTheTrack() async throws {
        let upload = try await Self.syncUpload(audio: #", "audio": {"file": "song.ogg", "offset": 30}"#)
        let destination = Paths.scratch("offset-past-end")
        do {
            _ = try await TranscodeJob(input: upload, destination: destination, preset: .builtIn).run(logger: .init(label: "t"))
            Issue.record("an offset past the end of the track must be refused")
        } catch let error as TranscodeError {
            #expect(error.code == "bad_trim")
            #expect("\(error)".contains("song.ogg") && "\(error)".contains("offset 30.000 s"), "\(error)")
        }
        #expect(!FileManager.default.fileExists(atPath: destination))
    }
}

extension UploadMergeTests {
    /// The landscape clip of the sample upload (3.0–5.0 s) inside the portrait frame: `fit` leaves
    /// black bars above and below it, `fill` covers the frame (its dark blue reaches the top).
    @Test func fitPolicyLetterboxesAndFillPolicyCovers() async throws {
        let fit = try await Fixtures.shared.output(Paths.sample("upload"))
        let top = try Checks.meanColor("\(fit.directory)/video.mp4", crop: "iw:ih/10:0:0", at: 4.0)
        let middle = try Checks.meanColor("\(fit.directory)/video.mp4", crop: "iw:ih/10:0:ih*9/20", at: 4.0)
        #expect(top.allSatisfy { $0 < 8 }, "bars are black: \(top)")
        #expect(middle[2] > middle[0] + 15, "the clip's dark blue is in the middle: \(middle)")

        var preset = Preset.builtIn
        preset.video.clipFit = .fill
        let destination = Paths.scratch("upload-fill")
        _ = try await TranscodeJob(input: Paths.sample("upload"), destination: destination, preset: preset).run(logger: .init(label: "t"))
        let filled = try Checks.meanColor("\(destination)/video.mp4", crop: "iw:ih/10:0:0", at: 4.0)
        #expect(filled[2] > filled[0] + 15, "no bars with fill: \(filled)")
    }
}

extension UploadMergeTests {
    /// The sound track may be any format libavformat reads: MP3, AAC in M4A, WAV (here 22 kHz mono).
    @Test(arguments: ["song.mp3", "song.m4a", "song.wav"])
    func soundTrackFormats(file: String) async throws {
        let upload = try await Self.syncUpload(audio: #", "audio": {"file": "\#(file)", "fadeOut": 0.5}"#)
        let output = try await Fixtures.shared.output(upload)
        let mp4 = "\(output.directory)/video.mp4"
        #expect(output.manifest.music?.path.hasSuffix(file) == true)
        #expect(try SyncMarks.rms(mp4, from: 0.5, to: 2.5) > 0.02, "the song plays")
        #expect(try SyncMarks.rms(mp4, from: 3.5, to: 7.0) < 0.001, "silence after the 3 s song")
        #expect(try Checks.frames(mp4).count == 219)
    }
}

extension UploadMergeTests {
    /// A long recording trimmed near its end is read from the key frame before the cut (a seek),
    /// and its marks still land on time: a 20 s clip with its flash + beep at 16.0 s, cut 15–17 s.
    @Test func aClipTrimmedLateIsSoughtAndStaysInSync() async throws {
        let x264 = ["-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-g", "60"]
        let upload = try await Fixtures.shared.upload("late-trim", files: [
            "a.mp4": SyncMarks.clip(width: 360, height: 640, fps: "30", seconds: 2, video: x264),
            "long.mp4": SyncMarks.clip(width: 360, height: 640, fps: "30", seconds: 20, mark: 16, video: x264),
        ], manifest: #"{"id": "late", "clips": [{"file": "a.mp4"}, {"file": "long.mp4", "start": 15, "end": 17}]}"#)
        let output = try await Fixtures.shared.output(upload)
        let mp4 = "\(output.directory)/video.mp4"
        #expect(try Checks.frames(mp4).count == 120)
        let flashes = try SyncMarks.flashes(mp4), beeps = try SyncMarks.beeps(mp4)
        #expect(flashes.count == 2 && beeps.count == 2, "flashes \(flashes) beeps \(beeps)")
        for (flash, expected) in zip(flashes, [1.0, 3.0]) { #expect(abs(flash - expected) <= Self.frame + 0.001, "flash \(flash)") }
        for (beep, flash) in zip(beeps, flashes) { #expect(abs(beep - flash) <= Self.frame, "A/V offset \(Int((beep - flash) * 1000)) ms") }
    }
}

extension UploadMergeTests {
    /// Clips that are not a whole number of 30 fps frames do not drift: six 0.45 s clips (13.5
    /// frames each) make 2.7 s = 81 frames, not 6 × 14 = 84.
    @Test func fractionalClipLengthsDoNotAccumulate() async throws {
        let x264 = ["-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p"]
        let clips = (0..<6).map { _ in #"{"file": "short.mp4"}"# }.joined(separator: ", ")
        let upload = try await Fixtures.shared.upload("fractional", files: [
            "short.mp4": SyncMarks.clip(width: 360, height: 640, fps: "60", seconds: 0.45, mark: 0.2, video: x264) + ["-t", "0.45"],
        ], manifest: #"{"id": "fractional", "clips": [\#(clips)]}"#)
        let output = try await Fixtures.shared.output(upload)
        let mp4 = "\(output.directory)/video.mp4"
        #expect(try Checks.frames(mp4).count == 81)
        let streams = try Checks.streams(mp4)
        let audio = try #require(streams.first { $0.string("codec_type") == "audio" }?.double("duration"))
        #expect(abs(audio - 2.7) <= Self.frame, "audio \(audio) s")
        // Every clip's beep is still with its flash.
        let flashes = try SyncMarks.flashes(mp4), beeps = try SyncMarks.beeps(mp4)
        #expect(flashes.count == 6 && beeps.count == 6, "flashes \(flashes) beeps \(beeps)")
        for (beep, flash) in zip(beeps, flashes) { #expect(abs(beep - flash) <= Self.frame, "A/V offset \(Int((beep - flash) * 1000)) ms") }
    }
}
