import IngestdTesting
import Foundation
import Testing
import Transcode

/// The `ingestd` binary: exit statuses, error messages, JSON output, atomic output directories.
@Suite struct CommandLineTests {
    func ingestd(_ arguments: [String]) throws -> Tool.Result {
        try Tool.run(Paths.binary, arguments)
    }

    @Test func brokenUploadExitsWithBadInputNamingTheFile() throws {
        let out = Paths.scratch("cli-broken")
        let result = try ingestd(["transcode", Paths.sample("broken_truncated.mp4"), "--out", out])
        #expect(result.status == 65)
        #expect(result.stderr.contains("broken_truncated.mp4"))
        #expect(result.stderr.contains("cannot open as media"))
        #expect(!FileManager.default.fileExists(atPath: out), "nothing is published for a failed job")
        let siblings = try FileManager.default.contentsOfDirectory(atPath: (out as NSString).deletingLastPathComponent)
        #expect(!siblings.contains { $0.contains("cli-broken.staging") }, "staging directory left behind")
    }

    @Test func jsonErrorIsMachineReadable() throws {
        let result = try ingestd(["transcode", Paths.sample("broken_truncated.mp4"), "--out", Paths.scratch("cli-json"), "--json"])
        #expect(result.status == 65)
        let body = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        let error = try #require(body?["error"] as? [String: Any])
        #expect(error["code"] as? String == "corrupt_input")
        #expect(error["exitStatus"] as? Int == 65)
    }

    @Test func missingInputExits66() throws {
        let result = try ingestd(["transcode", "/nonexistent/clip.mp4", "--out", Paths.scratch("cli-missing")])
        #expect(result.status == 66)
        #expect(result.stderr.contains("/nonexistent/clip.mp4"))
    }

    @Test func audioOnlyUploadIsRejectedAsNoVideo() async throws {
        let audio = try await Fixtures.shared.generated("audio_only.m4a", ["-f", "lavfi", "-i", "sine=d=2", "-c:a", "aac"])
        let result = try ingestd(["transcode", audio, "--out", Paths.scratch("cli-audio")])
        #expect(result.status == 65)
        #expect(result.stderr.contains("no video stream"))
    }

    @Test func badPresetExits78NamingTheField() throws {
        let preset = Paths.scratch("bad-preset.json")
        var json = String(decoding: Preset.builtIn.canonicalJSON(), as: UTF8.self)
        json = json.replacingOccurrences(of: "\"crf\" : 26", with: "\"crf\" : 80")
        try json.write(toFile: preset, atomically: true, encoding: .utf8)
        let result = try ingestd(["transcode", Paths.sample("hdr_hlg.mp4"), "--out", Paths.scratch("cli-preset"), "--preset", preset])
        #expect(result.status == 78)
        #expect(result.stderr.contains("rungs[1].crf"), "\(result.stderr)")  // 360p, the second rung
    }

    @Test func existingOutputIsNotOverwritten() throws {
        let out = Paths.scratch("cli-exists")
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        try "keep".write(toFile: "\(out)/precious.txt", atomically: true, encoding: .utf8)
        let result = try ingestd(["transcode", Paths.sample("hdr_hlg.mp4"), "--out", out])
        #expect(result.status == 73)
        #expect(try String(contentsOfFile: "\(out)/precious.txt", encoding: .utf8) == "keep")
    }

    @Test func jsonPrintsTheManifestThatWasWritten() throws {
        let out = Paths.scratch("cli-ok")
        let result = try ingestd(["transcode", Paths.sample("hdr_hlg.mp4"), "--out", out, "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let printed = try JSONDecoder().decode(ReadyManifest.self, from: Data(result.stdout.utf8))
        let written = try JSONDecoder().decode(ReadyManifest.self, from: Data(contentsOf: URL(fileURLWithPath: "\(out)/manifest.json")))
        #expect(printed == written)
        #expect(written.preset.hash == Preset.builtIn.contentHash)
        #expect(written.sources.first?.video?.colorTransfer == "arib-std-b67")
        for rendition in written.renditions {
            #expect(FileManager.default.fileExists(atPath: "\(out)/\(rendition.playlist)"))
        }
    }

    @Test func anUploadDirectoryIsTranscodedAndItsMistakesAreReportedByField() throws {
        let out = Paths.scratch("cli-upload")
        let result = try ingestd(["transcode", Paths.sample("upload"), "--out", out, "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let manifest = try JSONDecoder().decode(ReadyManifest.self, from: Data(result.stdout.utf8))
        #expect(manifest.uploadID == "sample-upload-1" && manifest.sources.count == 3)

        let bad = Paths.scratch("cli-bad-upload")
        try FileManager.default.createDirectory(atPath: bad, withIntermediateDirectories: true)
        try Data(#"{"id": "x", "clips": [{"file": "../../etc/passwd"}]}"#.utf8).write(to: URL(fileURLWithPath: "\(bad)/upload.json"))
        let refused = try ingestd(["transcode", bad, "--out", Paths.scratch("cli-bad-upload-out"), "--json"])
        #expect(refused.status == 65)
        let body = try JSONSerialization.jsonObject(with: Data(refused.stdout.utf8)) as? [String: Any]
        let error = try #require(body?["error"] as? [String: Any])
        #expect(error["code"] as? String == "bad_upload" && error["field"] as? String == "clips[0].file")
        #expect(refused.stderr.contains("upload.json: field 'clips[0].file'"))
    }

    @Test func probeShowsThePlanWithoutEncoding() throws {
        let result = try ingestd(["probe", Paths.sample("portrait_rotated.mp4"), "--json"])
        #expect(result.status == 0)
        let body = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        let plan = try #require(body?["plan"] as? [String: Any])
        let clips = try #require(plan["clips"] as? [[String: Any]])
        #expect(clips.first?["rotation"] as? Int == 90)
        #expect((body?["clipFilterGraphs"] as? [String])?.first?.contains("transpose=clock") == true)
    }

    @Test(.enabled(if: Tool.exists("script"), "util-linux script is not installed"))
    func progressIsDrawnOnATerminal() throws {
        let out = Paths.scratch("cli-progress")
        // `script` gives the command a pseudo-terminal, as an operator's shell would.
        let result = try Tool.run("script", ["-qfec", "\(Paths.binary) transcode \(Paths.sample("portrait_rotated.mp4")) --out \(out)", "/dev/null"])
        #expect(result.status == 0)
        let lines = result.stdout.split(whereSeparator: { $0 == "\r" || $0 == "\n" }).filter { $0.contains("ETA") }
        #expect(lines.count >= 2, "progress updates: \(lines.count)")
        #expect(lines.contains { $0.contains("% [") && $0.contains("fps") && $0.contains("x ETA") })
        // Not on a pipe: stderr stays clean for logs.
        let piped = try ingestd(["transcode", Paths.sample("hdr_hlg.mp4"), "--out", Paths.scratch("cli-progress-pipe")])
        #expect(!piped.stderr.contains("ETA"))
    }

    @Test func helpTeachesEveryCommand() throws {
        let top = try ingestd(["--help"])
        #expect(top.status == 0)
        for command in ["transcode", "watch", "status", "reprocess", "probe", "preset"] { #expect(top.stdout.contains(command)) }
        #expect(top.stdout.contains("EXIT STATUS"))
        #expect(!top.stdout.contains("job-run"), "the internal job command stays hidden")
        let watch = try ingestd(["help", "watch"])
        #expect(watch.stdout.contains("--spool") && watch.stdout.contains("SIGTERM"))
        let usage = try ingestd(["transcode"])
        #expect(usage.status == 64)
    }

    @Test func posterSkipsABlackOpening() async throws {
        let clip = try await Fixtures.shared.generated("black_start.mp4", [
            "-f", "lavfi", "-i", "color=black:s=640x360:r=30:d=3", "-f", "lavfi", "-i", "testsrc2=s=640x360:r=30:d=2",
            "-filter_complex", "[0:v][1:v]concat=n=2:v=1[v]", "-map", "[v]", "-c:v", "libx264", "-preset", "ultrafast"])
        let output = try await Fixtures.shared.output(clip)
        #expect(output.manifest.timings.posterAtSeconds >= 3)
        let luma = try Checks.lumaStats("\(output.directory)/\(output.manifest.posters[0].path)")
        #expect(luma.high - luma.low > 40)
    }

    /// A 1.2 s night clip whose only bright moment (0.2 s, between whole seconds) would be missed by
    /// sampling once a second: the poster is at least half as bright as the source's brightest frame.
    @Test func posterOfAShortDarkClipIsItsBrightMoment() async throws {
        let clip = try await Fixtures.shared.generated("dark_flash.mp4", [
            "-f", "lavfi", "-i", "color=c=0x0c0c0c:s=640x360:r=30:d=1.2,noise=alls=12:allf=t",
            "-f", "lavfi", "-i", "testsrc2=s=640x360:r=30:d=1.2",
            "-filter_complex", "[0:v][1:v]overlay=enable='between(t,0.5,0.7)'[v]", "-map", "[v]",
            "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p"])
        let source = try Checks.frameLuma(clip)
        let brightest = try #require(source.max())
        let median = source.sorted()[source.count / 2]
        #expect(source.count == 36 && brightest > 3 * median, "the clip is not dark with a bright moment: \(source)")
        let output = try await Fixtures.shared.output(clip)
        for poster in output.manifest.posters {
            let luma = try Checks.lumaStats("\(output.directory)/\(poster.path)")
            #expect(luma.average >= 0.5 * brightest, "\(poster.path): mean luma \(luma.average), source brightest \(brightest)")
        }
        #expect((0.5...0.7).contains(output.manifest.timings.posterAtSeconds))
    }
}
