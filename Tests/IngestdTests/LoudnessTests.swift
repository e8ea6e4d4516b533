import IngestdTesting
import Foundation
import Testing
import Transcode

/// The final mix is normalised to −14 LUFS integrated, true peak ≤ −1 dBTP, measured by
/// ffmpeg's `ebur128` filter on the published MP4.
@Suite struct LoudnessTests {
    static func loudness(_ path: String) throws -> (integrated: Double, truePeak: Double) {
        let result = try Tool.run("ffmpeg", ["-nostats", "-i", path, "-map", "0:a", "-af", "ebur128=peak=true", "-f", "null", "-"])
        let summary = result.stderr.components(separatedBy: "Summary:").last ?? ""
        func value(after label: String) -> Double? {
            guard let range = summary.range(of: label) else { return nil }
            return Double(summary[range.upperBound...].trimmingCharacters(in: .whitespaces).prefix { "-.0123456789".contains($0) })
        }
        return (value(after: "I:") ?? 99, value(after: "Peak:") ?? 99)
    }

    func check(_ source: String) async throws {
        let output = try await Fixtures.shared.output(source)
        let measured = try Self.loudness("\(output.directory)/video.mp4")
        #expect(abs(measured.integrated - -14) <= 1, "integrated \(measured.integrated) LUFS")
        #expect(measured.truePeak <= -1, "true peak \(measured.truePeak) dBTP")
    }

    @Test func quietSpeechLevelSourceIsBroughtUp() async throws {
        let clip = try await Fixtures.shared.generated("quiet.mp4", [
            "-f", "lavfi", "-i", "testsrc2=s=320x568:r=30:d=12",
            "-f", "lavfi", "-i", "sine=f=330:d=12:sample_rate=44100,volume=-28dB,tremolo=f=0.5:d=0.6",
            "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac"])
        let before = try Self.loudness(clip)
        #expect(before.integrated < -30, "the source really is quiet: \(before.integrated)")
        try await check(clip)
    }

    @Test(.enabled(if: Paths.sharedMedia != nil, "../shared/media is not present"))
    func loudMusicIsBroughtDown() async throws {
        let clip = try await Fixtures.shared.generated("music.mp4", [
            "-f", "lavfi", "-i", "color=c=navy:s=320x568:r=30:d=20",
            "-i", "\(Paths.sharedMedia!)/derived_pd_brahms_hungarian_dance5_aac.m4a",
            "-af", "volume=6dB", "-t", "20", "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac"])
        try await check(clip)
    }
}
