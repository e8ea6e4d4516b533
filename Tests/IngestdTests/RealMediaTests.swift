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
        ("edge_audio_shorter_than_video.mp4", 320, 240),
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
