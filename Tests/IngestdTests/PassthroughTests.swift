import IngestdTesting
import Foundation
import Testing
import Transcode

/// Top-rung passthrough (issue #15): an upload the app already compressed becomes the top rung
/// and the MP4 packet for packet; the lower rungs are encoded from the one decode with IDRs at
/// exactly the upload's IDRs. Checked with ffprobe/ffmpeg on the real outputs.
@Suite struct PassthroughTests {
    /// As the app sends it: H.264 High@4.0, 1080x1920, 30 fps, an IDR every second, peak rate
    /// capped at 3 Mbit/s, BT.709, AAC, 6 s.
    static func appUpload() async throws -> String {
        try await Fixtures.shared.generated("app_compressed.mp4", [
            "-f", "lavfi", "-i", "testsrc2=s=1080x1920:r=30:d=6", "-f", "lavfi", "-i", "sine=f=440:d=6:sample_rate=48000",
            "-c:v", "libx264", "-preset", "veryfast", "-profile:v", "high", "-level", "4.0", "-pix_fmt", "yuv420p",
            "-x264-params", "keyint=30:min-keyint=30:scenecut=0", "-b:v", "2500k", "-maxrate", "3000k", "-bufsize", "1500k",
            "-color_primaries", "bt709", "-color_trc", "bt709", "-colorspace", "bt709",
            "-c:a", "aac", "-b:a", "128k", "-movflags", "+faststart"])
    }

    /// MD5 of every video packet's bytes, in order (ffmpeg's md5 muxer over a stream copy).
    static func videoPacketsMD5(_ path: String) throws -> String {
        let result = try Tool.run("ffmpeg", ["-v", "error", "-i", path, "-map", "0:v:0", "-c", "copy", "-f", "md5", "-"])
        guard result.status == 0 else { throw Tool.ProbeFailure(message: result.stderr) }
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func appUploadBecomesTheTopRungPacketForPacket() async throws {
        let upload = try await Self.appUpload()
        let output = try await Fixtures.shared.output(upload)
        let decision = try #require(output.manifest.topRung)
        #expect(decision.mode == .passthrough, "\(decision.reason)")
        let top = try #require(output.manifest.renditions.last)
        #expect(top.width == 1080 && top.height == 1920)
        let original = try Self.videoPacketsMD5(upload)
        #expect(try Self.videoPacketsMD5("\(output.directory)/\(top.playlist)") == original, "top rung = the upload's packets")
        #expect(try Self.videoPacketsMD5("\(output.directory)/\(output.manifest.mp4)") == original, "MP4 = the upload's packets")
        // The master declares the upload's own profile and level (High@4.0), the lower rungs x264's.
        #expect(top.codecs.hasPrefix("avc1.640028"), "\(top.codecs)")
        // The sound is still mixed, normalised and encoded: AAC 48 kHz stereo in the top rung too.
        let audio = try Checks.streams("\(output.directory)/\(top.playlist)").filter { $0["codec_type"] as? String == "audio" }
        #expect(audio.first?["sample_rate"] as? String == "48000")
    }

    @Test func everyRungHasIDRsAtExactlyTheUploadsIDRs() async throws {
        let upload = try await Self.appUpload()
        let output = try await Fixtures.shared.output(upload)
        let sourceKeys = try Checks.frames(upload).filter(\.key).map { ($0.time * 1000).rounded() / 1000 }
        #expect(sourceKeys == [0, 1, 2, 3, 4, 5])
        for rendition in output.manifest.renditions {
            let frames = try Checks.frames("\(output.directory)/\(rendition.playlist)")
            #expect(frames.count == 180, "\(rendition.name) frame count")
            let keys = frames.filter(\.key).map { ($0.time * 1000).rounded() / 1000 }
            let first = keys.first ?? 0
            #expect(keys.map { (($0 - first) * 1000).rounded() / 1000 } == sourceKeys, "\(rendition.name) key frames")
            // Segments cut at the upload's IDRs, following 0.5 + 0.5 + 1 s (each rounded up to an IDR).
            let directory = "\(output.directory)/\(rendition.name)"
            let playlist = try Checks.playlist(directory)
            #expect(playlist.segments.map { ($0.duration * 10).rounded() / 10 } == [1, 1, 1, 1, 1, 1], "\(rendition.name)")
            for segment in playlist.segments {
                let first = try Checks.firstFrameOfSegment(directory: directory, segment: segment.uri)
                #expect(first.key && first.type == "I", "\(rendition.name)/\(segment.uri) starts with \(first.type)")
            }
        }
    }

    @Test func probeSaysWhyAndThePresetCanTurnItOff() async throws {
        let upload = try await Self.appUpload()
        let file = try SourceFile(path: upload)
        let probe = try MediaProbe.probe(file)
        let scan = try #require(probe.video?.packets)
        #expect(probe.video?.profile == "High" && probe.video?.level == 40)
        #expect(scan.frames == 180 && scan.idrSeconds.map { ($0 * 1000).rounded() / 1000 } == [0, 1, 2, 3, 4, 5])
        #expect(scan.peakKbps > 1000 && scan.peakKbps <= 4500, "\(scan.peakKbps) kbit/s")
        #expect(try TranscodePlan.make(probe: probe, preset: .builtIn).topRungDecision.mode == .passthrough)

        var off = Preset.builtIn
        off.video.passthrough = false
        let plan = try TranscodePlan.make(probe: probe, preset: off)
        #expect(plan.topRungDecision.mode == .encode && plan.topRungDecision.idrFrames == nil)
        #expect(plan.topRungDecision.reason == "turned off by the preset (video.passthrough)")
        #expect(plan.encodedRungs.count == plan.rungs.count)

        // A rotated phone recording is encoded, and the manifest says why.
        let rotated = try await Fixtures.shared.output(Paths.sample("portrait_rotated.mp4"))
        #expect(rotated.manifest.topRung?.mode == .encode)
        #expect(rotated.manifest.topRung?.reason.isEmpty == false)
    }
}
