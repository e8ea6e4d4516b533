import IngestdTesting
import Foundation
import Testing
import Ingest
import Transcode

/// What phones produce — rotation, HDR, 60 fps, odd sizes, no audio — comes out normalised.
@Suite struct NormalizationTests {
    @Test func rotatedPhoneVideoComesOutUprightWithoutRotationFlag() async throws {
        let output = try await Fixtures.shared.output(Paths.sample("portrait_rotated.mp4"))
        #expect(output.manifest.width == 1080 && output.manifest.height == 1920)
        for file in ["video.mp4", "1080p/index.m3u8", "360p/index.m3u8"] {
            let path = "\(output.directory)/\(file)"
            let video = try #require(try Checks.streams(path).first { $0.string("codec_type") == "video" })
            #expect(video.int("height")! > video.int("width")!, "\(file) is not portrait")
            #expect((video["side_data_list"] as? [[String: Any]] ?? []).allSatisfy { $0["rotation"] == nil }, "\(file) carries a rotation flag")
            // The sample has a red band on top and a blue band at the bottom of the upright picture.
            let top = try Checks.meanColor(path, crop: "iw:ih/20:0:0")
            let bottom = try Checks.meanColor(path, crop: "iw:ih/20:0:ih-ih/20")
            #expect(top[0] > 180 && top[2] < 80, "\(file) top is \(top), expected red")
            #expect(bottom[2] > 180 && bottom[0] < 80, "\(file) bottom is \(bottom), expected blue")
        }
    }

    @Test func hdrIsToneMappedToBT709SDR() async throws {
        let output = try await Fixtures.shared.output(Paths.sample("hdr_hlg.mp4"))
        let video = try #require(try Checks.streams("\(output.directory)/video.mp4").first { $0.string("codec_type") == "video" })
        #expect(video.string("color_transfer") == "bt709")
        #expect(video.string("pix_fmt") == "yuv420p")
        #expect(video.string("profile") == "High")
        // smptehdbars: the top-left bar is 40 % grey. Washed-out (untone-mapped) HLG drifts far from it.
        let grey = try Checks.meanColor("\(output.directory)/video.mp4", crop: "iw/16:ih/4:iw/64:ih/16")
        #expect(grey.allSatisfy { (70...150).contains($0) }, "grey bar came out as \(grey)")
    }

    @Test func sixtyFpsBecomesThirtyConstant() async throws {
        let output = try await Fixtures.shared.output(Paths.sample("landscape_60fps.mp4"))
        let frames = try Checks.frames("\(output.directory)/video.mp4")
        #expect(frames.count == 150)
        let deltas = zip(frames.dropFirst(), frames).map { $0.time - $1.time }
        #expect(deltas.allSatisfy { abs($0 - 1.0 / 30) < 0.001 })
        #expect(output.manifest.renditions.map(\.name) == ["234p", "360p", "720p"])
    }

    /// White is Y 255 in a full-range source and Y 235 in a limited one; both come out at 235 (TV
    /// range), in the rung at the source's own size too (which passes limited frames through).
    @Test(arguments: ["yuvj420p", "yuv420p"])
    func fullRangeIsBroughtToTVRangeAndLimitedRangeIsLeftAlone(_ format: String) async throws {
        let clip = try await Fixtures.shared.generated("white_\(format).mp4", [
            "-f", "lavfi", "-i", "color=c=white:s=360x640:r=30:d=1", "-vf", "format=\(format)",
            "-c:v", "libx264", "-preset", "ultrafast"])
        let source = try Checks.lumaStats(clip)
        #expect(abs(source.average - (format == "yuvj420p" ? 255 : 235)) <= 1, "source \(source)")
        let output = try await Fixtures.shared.output(clip)
        #expect(output.manifest.renditions.last?.height == 640)
        let top = try Checks.lumaStats("\(output.directory)/video.mp4")
        #expect(abs(top.average - 235) <= 2, "\(format) top rung: \(top)")
    }

    /// A BT.601 source (colour bars, tagged smpte170m) comes out tagged BT.709 with its colours
    /// converted: its top rung, at the source's own size, matches the source converted to BT.709 by
    /// swscale (an independent path: the engine converts in YUV with `colorspace`), and not the
    /// source's untouched pixels, which read as BT.709 would be the wrong colours.
    @Test func bt601SourceComesOutAsBT709WithTheSameColours() async throws {
        let clip = try await Fixtures.shared.generated("bars_bt601.mp4", [
            "-f", "lavfi", "-i", "smptebars=s=720x1280:r=30:d=2", "-vf", "scale=out_color_matrix=bt601:out_range=tv,format=yuv420p",
            "-colorspace", "smpte170m", "-color_primaries", "smpte170m", "-color_trc", "smpte170m",
            "-c:v", "libx264", "-preset", "ultrafast", "-crf", "4"])
        let output = try await Fixtures.shared.output(clip)
        let top = "\(output.directory)/720p/index.m3u8"
        let video = try #require(try Checks.streams(top).first { $0.string("codec_type") == "video" })
        #expect(video.string("color_space") == "bt709" && video.string("color_primaries") == "bt709"
                && video.string("color_transfer") == "bt709" && video.string("color_range") == "tv", "\(video)")
        #expect(video.int("width") == 720 && video.int("height") == 1280)
        func psnr(reference filter: String) throws -> (y: Double, u: Double, v: Double) {
            let run = try Tool.run("ffmpeg", ["-hide_banner", "-nostats", "-i", top, "-i", clip, "-lavfi",
                                              "[1:v]\(filter)format=yuv420p[ref];[0:v][ref]psnr", "-f", "null", "-"])
            let line = try #require(run.stderr.split(separator: "\n").last { $0.contains("PSNR y:") })
            func value(_ key: String) -> Double {
                Double(line.components(separatedBy: " \(key):").last?.split(separator: " ").first ?? "") ?? 0
            }
            return (value("y"), value("u"), value("v"))
        }
        let converted = try psnr(reference: "scale=in_color_matrix=bt601:out_color_matrix=bt709,")
        let untouched = try psnr(reference: "")
        #expect(converted.y > 38 && converted.u > 38 && converted.v > 38, "against the BT.709 reference: \(converted)")
        #expect(converted.y > untouched.y + 8, "converted \(converted) vs untouched \(untouched)")
    }

    @Test func oddSizedSilentSourceGetsEvenSizesAndASilentTrack() async throws {
        let output = try await Fixtures.shared.output(Paths.sample("noaudio_odd.webm"))
        let streams = try Checks.streams("\(output.directory)/video.mp4")
        let video = try #require(streams.first { $0.string("codec_type") == "video" })
        #expect(video.int("width")! % 2 == 0 && video.int("height")! % 2 == 0)
        let audio = try #require(streams.first { $0.string("codec_type") == "audio" })
        #expect(audio.string("codec_name") == "aac")
        #expect(abs((audio.double("duration") ?? 0) - (video.double("duration") ?? 0)) <= 1.0 / 30)
        #expect(output.manifest.audio.clipSound == false && !output.manifest.audio.music)
        // Silence really is silent.
        let volume = try Tool.run("ffmpeg", ["-v", "info", "-i", "\(output.directory)/video.mp4", "-map", "0:a", "-af", "volumedetect", "-f", "null", "-"])
        #expect(volume.stderr.contains("max_volume: -91.0 dB"))
    }

    @Test func mp4IsFaststartWithAudioAndVideoInSync() async throws {
        let output = try await Fixtures.shared.output(Paths.sample("portrait_rotated.mp4"))
        let path = "\(output.directory)/video.mp4"
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let moov = try #require(bytes.range(of: Data("moov".utf8))?.lowerBound)
        let mdat = try #require(bytes.range(of: Data("mdat".utf8))?.lowerBound)
        #expect(moov < mdat, "moov must precede mdat (faststart)")
        let streams = try Checks.streams(path)
        let video = try #require(streams.first { $0.string("codec_type") == "video" })
        let audio = try #require(streams.first { $0.string("codec_type") == "audio" })
        #expect(abs(video.double("duration")! - audio.double("duration")!) <= 1.0 / 30)
        #expect(abs(video.double("duration")! - 6.0) <= 1.0 / 30)
        #expect(video.int("width") == 1080 && video.int("height") == 1920)
        // The MP4 is the top rung's encode: identical frame count and sizes.
        let top = try Checks.frames("\(output.directory)/1080p/index.m3u8")
        #expect(try Checks.frames(path).count == top.count)
    }

    /// preview.webp, read by libwebp's own tools: 3 s at 12 fps looping forever, at the top rung's
    /// shape with a 240 short side, within the budget, and listed in the manifest as it is.
    @Test func previewIsAnInfiniteLoopWithinBudget() async throws {
        let output = try await Fixtures.shared.output(Paths.sample("portrait_rotated.mp4"))
        let listed = try #require(output.manifest.preview)
        let path = "\(output.directory)/\(listed.path)"
        let animation = try Checks.webpAnimation(path)
        #expect(animation.width == 240 && animation.height == 426)
        #expect(animation.width == listed.width && animation.height == listed.height)
        #expect(animation.loop == 0)
        #expect(animation.durations.count == 36 && listed.frames == 36 && listed.fps == 12)
        #expect(abs(Double(animation.durations.reduce(0, +)) / 1000 - 3) < 0.05, "\(animation.durations)")
        #expect(listed.durationSeconds == 3)
        #expect(Checks.size(path) == listed.bytes && listed.bytes <= 300_000)
        #expect(listed.startSeconds >= 0 && listed.startSeconds + 3 <= output.manifest.durationSeconds + 0.1)
        let luma = try Checks.webpFirstFrameLuma(path)
        #expect(luma.high - luma.low > 40, "the first preview frame is flat: \(luma)")
    }

    /// The loop is the busiest 3 s: on a clip that is still for 4 s and then moves, it starts
    /// where the motion does (the earliest run wins only while no later one is clearly busier).
    @Test func previewLoopIsTheBusiestRun() async throws {
        let clip = try await Fixtures.shared.generated("still_then_moving.mp4", [
            "-f", "lavfi", "-i", "color=c=gray:s=640x360:r=30:d=4[a];testsrc2=s=640x360:r=30:d=4[b];[a][b]concat=n=2:v=1:a=0[out0]",
            "-c:v", "libx264", "-preset", "ultrafast"])
        let destination = Paths.scratch("out-preview-busiest")
        try? FileManager.default.removeItem(atPath: destination)
        let manifest = try await TranscodeJob(input: clip, destination: destination, preset: .builtIn).run(logger: .init(label: "t"))
        let listed = try #require(manifest.preview)
        #expect(listed.startSeconds >= 3.5 && listed.startSeconds <= 5.1, "preview starts at \(listed.startSeconds) s")
    }

    /// The byte budget is a hard limit: a noisy clip under a 20 kB budget still gets a loop, with
    /// lower quality and fewer frames, never a larger file.
    @Test func previewBudgetIsAHardLimit() async throws {
        let clip = try await Fixtures.shared.generated("noise_preview.mp4", [
            "-f", "lavfi", "-i", "testsrc2=s=640x360:r=30:d=4,noise=alls=60:allf=t", "-c:v", "libx264", "-preset", "ultrafast", "-crf", "10"])
        var preset = Preset.builtIn
        preset.preview.maxBytes = 20_000
        let destination = Paths.scratch("out-preview-budget")
        try? FileManager.default.removeItem(atPath: destination)
        let manifest = try await TranscodeJob(input: clip, destination: destination, preset: preset).run(logger: .init(label: "t"))
        let listed = try #require(manifest.preview)
        let path = "\(destination)/\(listed.path)"
        #expect(Checks.size(path) <= 20_000 && Checks.size(path) == listed.bytes)
        let animation = try Checks.webpAnimation(path)
        #expect(animation.loop == 0 && animation.durations.count == listed.frames && listed.frames >= 2)
        #expect(abs(Double(animation.durations.reduce(0, +)) / 1000 - listed.durationSeconds) < 0.05)
        #expect(abs(listed.durationSeconds - 3) < 0.5)
        #expect(animation.width == 426 && animation.height == 240)
    }

    /// A picture that never changes: libwebp stores one frame, and the manifest says so.
    @Test func previewOfAStillPictureIsOneFrame() async throws {
        let output = try await Fixtures.shared.output(Paths.sample("hdr_hlg.mp4"))
        let listed = try #require(output.manifest.preview)
        let result = try Tool.run("webpmux", ["-info", "\(output.directory)/\(listed.path)"])
        #expect(result.status == 0 && result.stdout.contains("Canvas size: \(listed.width) x \(listed.height)"))
        #expect(listed.frames == 1 && !result.stdout.contains("animation"), "\(result.stdout)")
        #expect(abs(listed.durationSeconds - output.manifest.durationSeconds) < 0.1)
    }

    @Test func postersAndStoryboardAreRealPictures() async throws {
        let output = try await Fixtures.shared.output(Paths.sample("portrait_rotated.mp4"))
        #expect(output.manifest.posters.count == 3)
        for poster in output.manifest.posters {
            let path = "\(output.directory)/\(poster.path)"
            let stream = try #require(try Checks.streams(path).first)
            #expect(stream.string("codec_name") == "mjpeg")
            #expect(stream.int("width") == poster.width && stream.int("height") == poster.height)
            let luma = try Checks.lumaStats(path)
            #expect(luma.average > 30 && luma.average < 225, "\(poster.path) is blank: \(luma)")
            #expect(luma.high - luma.low > 40, "\(poster.path) is flat: \(luma)")
        }
        let board = output.manifest.storyboard
        let sprite = try #require(try Checks.streams("\(output.directory)/\(board.image)").first)
        #expect(sprite.int("width") == board.columns * 90 && sprite.int("height") == board.rows * 160)
        let vtt = try String(contentsOfFile: "\(output.directory)/\(board.track)", encoding: .utf8)
        #expect(vtt.components(separatedBy: "-->").count - 1 == 6)
    }
}
