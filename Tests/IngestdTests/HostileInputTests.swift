import IngestdTesting
import Foundation
import Testing
import Transcode

/// Bombs, absurd media and hostile uploads: refused early with a clear reason, nothing lost.
@Suite(.serialized) struct HostileInputTests {
    func make(_ name: String, _ arguments: [String]) async throws -> String {
        try await Fixtures.shared.generated(name, arguments)
    }

    func transcode(_ path: String) throws -> Tool.Result {
        try Tool.run(Paths.binary, ["transcode", path, "--out", Paths.scratch("hostile-\(UUID().uuidString)"), "--json"])
    }

    func code(_ result: Tool.Result) -> String? {
        let body = try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        return (body?["error"] as? [String: Any])?["code"] as? String
    }

    @Test func absurdMediaIsRefusedWithASpecificReason() async throws {
        let cases: [(String, [String], String)] = [
            ("huge.avi", ["-f", "lavfi", "-i", "color=s=8192x8192:d=0.04", "-frames:v", "1", "-c:v", "mjpeg"], "limit_resolution"),
            ("hours.mkv", ["-f", "lavfi", "-i", "color=s=64x64:r=10:d=0.5", "-vf", "setpts=N*1800/TB/10", "-fps_mode", "passthrough",
                           "-c:v", "libx264", "-preset", "ultrafast"], "too_long"),
            ("streams.mkv", ["-f", "lavfi", "-i", "color=s=64x64:d=0.5", "-f", "lavfi", "-i", "anullsrc=d=0.5", "-map", "0:v"]
                + Array(repeating: ["-map", "1:a"], count: 40).flatMap { $0 } + ["-c:v", "libx264", "-c:a", "pcm_s16le", "-t", "0.5"], "limit_streams"),
            ("channels.mkv", ["-f", "lavfi", "-i", "color=s=64x64:d=0.5", "-i", try Self.wav64(),
                              "-map", "0:v", "-map", "1:a", "-c:v", "libx264", "-c:a", "copy"], "limit_audio_channels"),
            ("fast.mkv", ["-f", "lavfi", "-i", "color=s=64x64:r=10000:d=0.02", "-c:v", "libx264", "-preset", "ultrafast"], "limit_frame_rate"),
            ("empty.mp4", ["-f", "lavfi", "-i", "color=s=64x64:d=1", "-frames:v", "0", "-c:v", "libx264"], "no_video_stream"),
            ("audio.m4a", ["-f", "lavfi", "-i", "sine=d=1", "-c:a", "aac"], "no_video_stream"),
            ("picture.png", ["-f", "lavfi", "-i", "testsrc2=s=320x240", "-frames:v", "1"], "still_image"),
        ]
        for (name, arguments, expected) in cases {
            let path = try await make(name, arguments)
            let result = try transcode(path)
            #expect(result.status == 65, "\(name): status \(result.status) \(result.stderr)")
            #expect(code(result) == expected, "\(name): \(result.stdout)")
            #expect(result.stderr.contains(name), "\(name): the message names the file")
        }
        let srt = Paths.scratch("subtitles.srt")
        try "1\n00:00:00,000 --> 00:00:01,000\nhello\n".write(toFile: srt, atomically: true, encoding: .utf8)
        let subtitles = try await make("subtitles.mkv", ["-i", srt])
        #expect(code(try transcode(subtitles)) == "no_video_stream")
    }

    /// A 0.5 s, 64-channel PCM WAV written by hand (ffmpeg's filters have no 64-channel layout).
    static func wav64() throws -> String {
        let path = Paths.scratch("64ch.wav")
        let channels = 64, rate = 8000, samples = 4000
        let dataBytes = channels * samples * 2
        var header = Data("RIFF".utf8)
        func le<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { header.append(contentsOf: $0) } }
        le(UInt32(36 + dataBytes)); header.append(contentsOf: Array("WAVEfmt ".utf8))
        le(UInt32(16)); le(UInt16(1)); le(UInt16(channels)); le(UInt32(rate)); le(UInt32(rate * channels * 2))
        le(UInt16(channels * 2)); le(UInt16(16)); header.append(contentsOf: Array("data".utf8)); le(UInt32(dataBytes))
        header.append(Data(count: dataBytes))
        try header.write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func headerThatLiesAboutDurationIsCaughtWhileDecoding() async throws {
        // 70 s of video whose MP4 headers claim 1 s: passes the probe, stopped by decoded time.
        let path = try await make("liar.mp4", ["-f", "lavfi", "-i", "color=s=64x64:r=30:d=70", "-c:v", "libx264", "-preset", "ultrafast"])
        let liar = Paths.scratch("liar-patched.mp4")
        var data = try Data(contentsOf: URL(fileURLWithPath: path))
        for tag in ["mvhd", "mdhd", "tkhd"] {
            var search = data.startIndex
            while let range = data.range(of: Data(tag.utf8), in: search..<data.endIndex) {
                let body = range.upperBound + 4  // after version/flags (version 0 assumed)
                let (scaleAt, durationAt) = tag == "tkhd" ? (-1, body + 16) : (body + 8, body + 12)
                let scale = scaleAt < 0 ? 1000 : data[scaleAt..<scaleAt + 4].reduce(0) { $0 << 8 | Int($1) }
                let claimed = UInt32(scale)  // one second in the box's time scale
                data.replaceSubrange(durationAt..<durationAt + 4, with: withUnsafeBytes(of: claimed.bigEndian) { Data($0) })
                search = range.upperBound
            }
        }
        try data.write(to: URL(fileURLWithPath: liar))
        let probe = try Tool.ffprobe(["-show_entries", "format=duration", liar])
        #expect(((probe["format"] as? [String: Any])?.double("duration") ?? 99) < 2, "the header now claims about 1 s")
        let result = try transcode(liar)
        #expect(result.status == 65)
        #expect(code(result) == "too_long")
        #expect(result.stderr.contains("decoded"))
    }

    @Test func hostileNamesAndLinksNeverEscapeTheSpool() async throws {
        let base = Paths.scratch("hostile-spool")
        try? FileManager.default.removeItem(atPath: base)
        let spool = "\(base)/spool", cdn = "\(base)/cdn"
        let daemon = try Daemon(spool: spool, cdn: cdn)
        let outside = try await ContainmentTests.canary()
        try FileManager.default.createSymbolicLink(atPath: "\(spool)/incoming/link-out.mp4", withDestinationPath: outside)
        try FileManager.default.createSymbolicLink(atPath: "\(spool)/incoming/link-dev.mp4", withDestinationPath: "/dev/zero")
        try FileManager.default.createSymbolicLink(atPath: "\(spool)/incoming/loop.mp4", withDestinationPath: "\(spool)/incoming/loop.mp4")
        try Daemon.drop(Paths.sample("upload/clip1.mp4"), into: spool, as: "new\nline\u{7}bell.mp4")
        // Names that would be options or paths if they ever reached a command line or a join.
        try Daemon.drop(Paths.sample("upload/clip1.mp4"), into: spool, as: "--out=..\\..\\etc.mp4")
        // Same name twice (one after the other): two uploads, two ids.
        try Daemon.drop(Paths.sample("noaudio_odd.webm"), into: spool, as: "same.webm")
        try Daemon.wait(timeout: 60, "the first same.webm to be claimed") { !FileManager.default.fileExists(atPath: "\(spool)/incoming/same.webm") }
        try Daemon.drop(Paths.sample("noaudio_odd.webm"), into: spool, as: "same.webm")
        // A non-UTF-8 name, created with the raw bytes.
        let rawName: [UInt8] = Array("\(spool)/incoming/bad-".utf8) + [0xff, 0xfe] + Array(".mp4".utf8) + [0]
        let hidden = "\(spool)/incoming/.raw.part"
        try FileManager.default.copyItem(atPath: Paths.sample("upload/clip1.mp4"), toPath: hidden)
        #expect(rawName.withUnsafeBufferPointer { rename(hidden, UnsafeRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self)) } == 0)
        try Daemon.wait(timeout: 120, "all hostile uploads to be filed") {
            Daemon.settled(spool) && Daemon.entries("\(spool)/archive").count + Daemon.entries("\(spool)/rejected").count >= 8
        }
        ContainmentTests.expectNoCanary(in: [spool, cdn])  // the link target outside the spool was never read
        let rejected = Daemon.entries("\(spool)/rejected")
        #expect(rejected.filter { $0.hasPrefix("link") || $0.hasPrefix("loop") }.count == 3, "\(rejected)")
        for id in rejected where id.hasPrefix("link") || id.hasPrefix("loop") {
            let reason = try String(contentsOfFile: "\(spool)/rejected/\(id)/reason.json", encoding: .utf8)
            #expect(reason.contains("\"symlink\""))
        }
        let archived = Daemon.entries("\(spool)/archive")
        #expect(archived.count == 5, "\(archived)")
        #expect(archived.filter { $0.hasPrefix("same-") }.count == 2, "two uploads with one name get two ids")
        for id in archived + rejected {
            #expect(id.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }, "unsafe id \(id)")
        }
        #expect(Daemon.entries(cdn).sorted() == archived.sorted())
        _ = daemon
    }

    @Test func fuzzedUploadsThroughTheDaemon() throws {
        let result = try Tool.run("python3", ["\(Paths.root)/Tests/fuzz/fuzz.py", "--binary", Paths.binary, "--samples", "\(Paths.root)/samples",
                                              "--seed", "7", "--count", "10", "--deadline", "300"])
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        let summary = try JSONSerialization.jsonObject(with: Data(result.stdout.split(separator: "\n").last.map { Data($0.utf8) } ?? Data())) as? [String: Any]
        #expect((summary?["failures"] as? [Any])?.isEmpty == true)
        #expect(summary?["inputs"] as? Int ?? 0 >= 10)
    }
}
