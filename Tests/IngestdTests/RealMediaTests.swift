import IngestdTesting
import Foundation
import Testing
import Transcode

/// The real phone and camera recordings in ../shared/media (used only when present).
@Suite(.enabled(if: Paths.sharedMedia != nil, "../shared/media is not present"))
struct RealMediaTests {
    /// File → expected upright output size of the top rung.
    static let playable: [(String, Int, Int)] = [
        ("phone_android12_4k60_portrait_rot90_vfr.mp4", 1080, 1920),
        ("phone_android14_hevc_hlg10_colorchart.mp4", 1920, 1080),
        ("phone_ios_flir_thermal_portrait_vfr_mono44k.mp4", 1080, 1440),
        ("phone_iphone6_h264_portrait_rot90_gps.mov", 320, 568),
        ("video_bbb_vp9_60fps_vorbis5.1.webm", 960, 540),
        ("video_bbb_vp9_642x642_noaudio.webm", 642, 642),
        ("video_canon_camera_mjpeg_pcm_mono44k.avi", 640, 480),
        ("video_cc0_flower_h264_aac_faststart.mp4", 960, 540),
        ("video_cc0_flower_vp8_vorbis.webm", 960, 540),
        ("edge_audio_shorter_than_video.mp4", 312, 234),  // 240p is within 1.25× of the 234p rung: no rung of its own
        ("edge_mdat_size_past_eof.mp4", 1080, 720),
    ]

    @Test(arguments: playable)
    func recordingComesOutUprightAndPlayable(file: String, width: Int, height: Int) async throws {
        let output = try await Fixtures.shared.output("\(Paths.sharedMedia!)/\(file)")
        #expect(output.manifest.width == width && output.manifest.height == height)
        let streams = try Checks.streams("\(output.directory)/video.mp4")
        let video = try #require(streams.first { $0.string("codec_type") == "video" })
        #expect(video.int("width") == width && video.int("height") == height)
        #expect(video.string("color_transfer") == "bt709" && video.string("pix_fmt") == "yuv420p")
        #expect((video["side_data_list"] as? [[String: Any]] ?? []).allSatisfy { $0["rotation"] == nil })
        let audio = try #require(streams.first { $0.string("codec_type") == "audio" })
        #expect(abs(audio.double("duration")! - video.double("duration")!) <= 1.0 / 30 + 0.001)
        let frames = try Checks.frames("\(output.directory)/\(output.manifest.renditions[0].playlist)")
        #expect(frames.count == Int((output.manifest.durationSeconds * 30).rounded()))
    }

    @Test(arguments: ["edge_malformed_free_box_no_moov.mp4", "derived_edge_iphone6_truncated_no_moov.mov"])
    func brokenRecordingFailsNamingTheFile(file: String) async throws {
        let path = "\(Paths.sharedMedia!)/\(file)"
        let result = try Tool.run(Paths.binary, ["transcode", path, "--out", Paths.scratch("broken-\(file)")])
        #expect(result.status == 65)
        #expect(result.stderr.contains(file))
    }

    @Test func musicOnlyFileIsRejected() throws {
        let path = "\(Paths.sharedMedia!)/audio_pd_brahms_hungarian_dance5_stereo44k.ogg"
        let result = try Tool.run(Paths.binary, ["transcode", path, "--out", Paths.scratch("music-only")])
        #expect(result.status == 65)
        #expect(result.stderr.contains("no video stream"))
    }
}

/// The real recordings joined into one upload with the public-domain music (used only when present).
@Suite(.enabled(if: Paths.sharedMedia != nil, "../shared/media is not present"))
struct RealMediaUploadTests {
    @Test func phoneRecordingsJoinWithMusicInOnePass() async throws {
        let directory = Paths.scratch("upload-real")
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let files = ["phone_iphone6_h264_portrait_rot90_gps.mov", "phone_android12_4k60_portrait_rot90_vfr.mp4",
                     "phone_android14_hevc_hlg10_colorchart.mp4", "video_bbb_vp9_642x642_noaudio.webm",
                     "phone_ios_flir_thermal_portrait_vfr_mono44k.mp4", "audio_pd_brahms_hungarian_dance5_stereo44k.ogg"]
        for file in files {
            try FileManager.default.copyItem(atPath: "\(Paths.sharedMedia!)/\(file)", toPath: "\(directory)/\(file)")
        }
        try Data("""
            {"id": "real", "clips": [
               {"file": "\(files[0])", "start": 0.5, "end": 2.5}, {"file": "\(files[1])"}, {"file": "\(files[2])"},
               {"file": "\(files[3])", "end": 2.0}, {"file": "\(files[4])", "end": 2.0}],
             "audio": {"file": "\(files[5])", "offset": 10, "mode": "mix", "musicGain": -6}}
            """.utf8).write(to: URL(fileURLWithPath: "\(directory)/upload.json"))
        let output = try await Fixtures.shared.output(directory)
        let mp4 = "\(output.directory)/video.mp4"
        // The iPhone clip sets the frame: upright 320x568. Every other clip is fitted into it.
        #expect(output.manifest.width == 320 && output.manifest.height == 568)
        // Sum of the trimmed clips: 2 + 0.3127 + 0.3001 + 2 + 2 s, each on the 30 fps grid.
        let expected = 2 + 0.3127 + 0.3001 + 2 + 2
        #expect(abs(output.manifest.durationSeconds - expected) <= 1.0 / 30, "\(output.manifest.durationSeconds) s")
        let streams = try Checks.streams(mp4)
        let video = try #require(streams.first { $0.string("codec_type") == "video" })
        let audio = try #require(streams.first { $0.string("codec_type") == "audio" })
        #expect(video.string("color_transfer") == "bt709" && video.string("pix_fmt") == "yuv420p")
        #expect(abs(audio.double("duration")! - video.double("duration")!) <= 1.0 / 30 + 0.001)
        #expect(try Checks.frames(mp4).count == Int((output.manifest.durationSeconds * 30).rounded()))
        let loudness = try LoudnessTests.loudness(mp4)
        #expect(abs(loudness.integrated - -14) <= 1 && loudness.truePeak <= -1, "\(loudness)")
    }
}
