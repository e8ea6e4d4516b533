import IngestdTesting
import Foundation
import Testing
import Transcode

/// `ingestd reprocess --preset hot`: AV1 and HEVC ladders added beside a published H.264 one,
/// checked with ffprobe, ffmpeg, GStreamer and Chromium (none of them ingestd's code).
@Suite(.serialized) struct HotLadderTests {
    /// The shipped hot preset (`Presets/hot.json`) with each codec ladder's encoder at its fastest
    /// (SVT-AV1 12, x265 ultrafast): the same rungs, CRFs, caps and code paths, at a fraction of
    /// the CPU (the shipped speeds are `make bench-hot`'s business).
    static let hotPreset: String = {
        let path = Paths.scratch("hot-preset-fastest.json")
        guard var preset = try? JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: "\(Paths.root)/Presets/hot.json"))) as? [String: Any],
              let ladders = preset["codecLadders"] as? [[String: Any]] else { return "\(Paths.root)/Presets/hot.json" }
        preset["codecLadders"] = ladders.map { ladder in
            var ladder = ladder
            ladder["encoderPreset"] = ladder["codec"] as? String == "av1" ? "12" : "ultrafast"
            return ladder
        }
        try? JSONSerialization.data(withJSONObject: preset).write(to: URL(fileURLWithPath: path))
        return path
    }()

    /// `ingestd` at the lowest priority: eight AV1 and HEVC encoders would otherwise starve the
    /// suites that run beside these and measure time (a worker's backoff, a lease).
    static func ingestd(_ arguments: [String]) throws -> Tool.Result {
        try Tool.run("nice", ["-n", "19", Paths.binary] + arguments)
    }

    /// A phone recording (6 s, 1080×1920 after rotation) published with the default preset, then
    /// made hot: done once per test run and shared. The phone's first hot run is killed (-9)
    /// mid-way (``KilledRun``); the hot run after it is the one the other tests read.
    struct Published: Sendable {
        let cdn: String
        let id: String
        /// `CDN/<id>/v<default hash>` and `CDN/<id>/v<hot hash>`.
        let before: String
        let after: String
        let killed: KilledRun?
        let hotResult: String
        let rerunResult: String
    }

    /// What a hot reprocess killed while it wrote its AV1 rungs left in view.
    struct KilledRun: Sendable {
        let masterKept: Bool
        let hotManifestWritten: Bool
    }

    actor Shared {
        static let shared = Shared()
        private var tasks: [String: Task<Published, Error>] = [:]

        /// `phone`: a rotated phone recording (every H.264 rung encoded); `app`: an upload the app
        /// compressed (its H.264 is the top rung, segments cut at its IDRs).
        func published(_ source: String = "phone") async throws -> Published {
            if let task = tasks[source] { return try await task.value }
            let file = source == "app" ? try await PassthroughTests.appUpload() : Paths.sample("portrait_rotated.mp4")
            let task = Task { try HotLadderTests.publish(source, file: file) }
            tasks[source] = task
            return try await task.value
        }
    }

    static func archive(_ name: String, file: String = Paths.sample("portrait_rotated.mp4")) throws -> (archive: String, cdn: String, id: String) {
        let base = Paths.scratch("hot-\(name)")
        try? FileManager.default.removeItem(atPath: base)
        let archive = "\(base)/archive", cdn = "\(base)/cdn"
        try FileManager.default.createDirectory(atPath: archive, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: cdn, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: file, toPath: "\(archive)/\(name).mp4")
        let dry = try Tool.run(Paths.binary, ["reprocess", archive, "--cdn", cdn, "--dry-run", "--json"])
        let report = try #require(try JSONSerialization.jsonObject(with: Data(dry.stdout.utf8)) as? [String: Any])
        let id = try #require(report.list("items").first?.string("id"))
        return (archive, cdn, id)
    }

    static func reprocess(_ archive: String, _ cdn: String, _ extra: [String] = []) throws -> String {
        let run = try ingestd(["reprocess", archive, "--cdn", cdn, "--json"] + extra)
        let report = (try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]) ?? [:]
        guard let item = report.list("items").first, let result = item.string("result") else {
            return "no report (\(run.status)): \(run.stderr.suffix(400))"
        }
        // A failure says why (the expectation prints it).
        return item.string("error").map { "\(result): \($0)" } ?? result
    }

    static func publish(_ name: String, file: String) throws -> Published {
        let (archive, cdn, id) = try archive(name, file: file)
        let first = try reprocess(archive, cdn)
        guard first == "published" else { throw Tool.ProbeFailure(message: "default publish: \(first)") }
        let killed = name == "phone" ? try killMidHot(archive, cdn, id) : nil
        let hot = try reprocess(archive, cdn, ["--preset", hotPreset])
        let rerun = try reprocess(archive, cdn, ["--preset", hotPreset])
        return Published(cdn: cdn, id: id, before: "\(cdn)/\(id)/v\(Preset.builtIn.contentHash)",
                         after: "\(cdn)/\(id)/v\(try Preset.load(hotPreset).contentHash)", killed: killed, hotResult: hot, rerunResult: rerun)
    }

    /// Starts a hot reprocess and kills it (-9) once it writes its first AV1 segment into the
    /// staging.
    static func killMidHot(_ archive: String, _ cdn: String, _ id: String) throws -> KilledRun {
        let masterBefore = try String(contentsOfFile: "\(cdn)/\(id)/master.m3u8", encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/nice")  // nice execs ingestd: the pid is ingestd's
        process.arguments = ["-n", "19", Paths.binary, "reprocess", archive, "--cdn", cdn, "--preset", hotPreset]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        try Daemon.wait(timeout: 120, "the hot job to write its first AV1 segment") {
            Daemon.entries("\(cdn)/\(id)").contains { $0.contains(".staging-")
                && FileManager.default.fileExists(atPath: "\(cdn)/\(id)/\($0)/av1-234p/seg_000.m4s") }
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        let hotVersion = "v\(try Preset.load(hotPreset).contentHash)"
        return KilledRun(masterKept: try String(contentsOfFile: "\(cdn)/\(id)/master.m3u8", encoding: .utf8) == masterBefore,
                         hotManifestWritten: FileManager.default.fileExists(atPath: "\(cdn)/\(id)/\(hotVersion)/manifest.json"))
    }

    static let codecs: [(codec: VideoCodec, name: String, tag: String)] = [(.av1, "av1", "av01"), (.hevc, "hevc", "hvc1")]
    static let rungs = ["234p", "360p", "720p", "1080p"]

    /// Every file of `directory`, by name.
    static func files(_ directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
    }

    @Test func keepsTheH264LadderByteForByteAndSkipsOnRerun() async throws {
        let video = try await Shared.shared.published()
        #expect(video.hotResult == "published")
        #expect(video.rerunResult == "skipped", "a video already hot is not encoded again")
        let root = try String(contentsOfFile: "\(video.cdn)/\(video.id)/master.m3u8", encoding: .utf8)
        #expect(root.contains((video.after as NSString).lastPathComponent + "/av1-234p/index.m3u8"), "the switch points at the hot version")
        for rung in Self.rungs {
            let names = Self.files("\(video.before)/\(rung)")
            #expect(names.count > 3 && names == Self.files("\(video.after)/\(rung)"), "\(rung): \(names)")
            for name in names {
                #expect(FileManager.default.contents(atPath: "\(video.before)/\(rung)/\(name)")
                    == FileManager.default.contents(atPath: "\(video.after)/\(rung)/\(name)"), "\(rung)/\(name) changed")
            }
        }
        #expect(FileManager.default.contents(atPath: "\(video.before)/video.mp4") == FileManager.default.contents(atPath: "\(video.after)/video.mp4"))
    }

    @Test(arguments: ["phone", "app"])
    func newRungsShareTheH264RungsSizeKeyframesSegmentsAndSound(_ source: String) async throws {
        let video = try await Shared.shared.published(source)
        let manifest = try JSONDecoder().decode(ReadyManifest.self, from: Data(contentsOf: URL(fileURLWithPath: "\(video.after)/manifest.json")))
        #expect(manifest.topRung?.mode == (source == "app" ? .passthrough : .encode))
        for rung in Self.rungs {
            let h264 = "\(video.after)/\(rung)/index.m3u8"
            let reference = try #require(try Checks.streams(h264).first { $0.string("codec_type") == "video" })
            let keyframes = try Checks.frames(h264).filter(\.key).map(\.time)
            let frames = try Checks.frames(h264).count
            let segments = try Checks.playlist("\(video.after)/\(rung)").segments.map(\.duration)
            let sound = try Self.soundPackets(h264)
            #expect(keyframes.count >= 5 && sound.count > 100)
            for (codec, name, tag) in Self.codecs {
                let playlist = "\(video.after)/\(name)-\(rung)/index.m3u8"
                let stream = try #require(try Checks.streams(playlist).first { $0.string("codec_type") == "video" }, "\(name)-\(rung)")
                #expect(stream.string("codec_name") == codec.rawValue)
                #expect(stream.string("codec_tag_string") == tag)
                #expect(stream.int("width") == reference.int("width") && stream.int("height") == reference.int("height"))
                #expect(stream.string("pix_fmt") == "yuv420p" && stream.string("color_space") == "bt709")
                let decoded = try Checks.frames(playlist)
                #expect(decoded.count == frames, "\(name)-\(rung): every frame")
                #expect(decoded.filter(\.key).map(\.time) == keyframes, "\(name)-\(rung): keyframes where the H.264 rung has them")
                #expect(try Checks.playlist("\(video.after)/\(name)-\(rung)").segments.map(\.duration) == segments)
                #expect(try Self.soundPackets(playlist) == sound, "\(name)-\(rung) carries the H.264 rung's sound, copied")
                let clean = try Tool.run("ffmpeg", ["-v", "error", "-xerror", "-i", playlist, "-f", "null", "-"])
                #expect(clean.status == 0 && clean.stderr.isEmpty, "\(name)-\(rung) decodes clean: \(clean.stderr)")
            }
        }
    }

    /// The sound's packets as ffprobe lists them: time, length, size.
    static func soundPackets(_ playlist: String) throws -> [String] {
        try Tool.ffprobe(["-select_streams", "a:0", "-show_entries", "packet=pts,duration,size", playlist])
            .list("packets").map { "\($0.string("pts") ?? "") \($0.string("duration") ?? "") \($0.string("size") ?? "")" }
    }

    @Test func masterListsEveryCodecBestFirstWithExactCodecs() async throws {
        let video = try await Shared.shared.published()
        let master = try String(contentsOfFile: "\(video.after)/master.m3u8", encoding: .utf8)
        let lines = master.split(separator: "\n").map(String.init)
        let variants = lines.enumerated().filter { $0.element.hasPrefix("#EXT-X-STREAM-INF:") }.map { (LadderTests.attributes($0.element), lines[$0.offset + 1]) }
        let expectedOrder = Self.rungs.flatMap { ["av1-\($0)", "hevc-\($0)", $0] }
        #expect(variants.map { ($0.1 as NSString).deletingLastPathComponent } == expectedOrder,
                "per size, smallest first: AV1, then HEVC, then H.264 (every player has it)")
        for (attributes, uri) in variants {
            let stream = try #require(try Checks.streams("\(video.after)/\(uri)").first { $0.string("codec_type") == "video" })
            let level = try #require(stream.int("level"))
            let codecs = try #require(attributes["CODECS"]).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            let videoCodec = try #require(codecs.split(separator: ",").first.map(String.init))
            #expect(codecs.hasSuffix(",mp4a.40.2"))
            // From the coded stream's own parameters, as ffprobe reads them.
            switch stream.string("codec_name") {
            case "av1":
                #expect(stream.string("profile") == "Main")
                #expect(videoCodec.hasPrefix(String(format: "av01.0.%02dM.08.", level)), "\(uri): \(videoCodec), level \(level)")
            case "hevc":
                #expect(stream.string("profile") == "Main")
                #expect(videoCodec.hasPrefix("hvc1.1.6.L\(level).") || videoCodec.hasPrefix("hvc1.1.2.L\(level)."), "\(uri): \(videoCodec)")
            default:
                #expect(videoCodec == "avc1.6400\(String(format: "%02x", level))", "\(uri): \(videoCodec)")
            }
            #expect(attributes["RESOLUTION"] == "\(stream.int("width") ?? 0)x\(stream.int("height") ?? 0)")
            #expect(attributes["FRAME-RATE"] == "30.000")
        }
        let iFrames = lines.filter { $0.hasPrefix("#EXT-X-I-FRAME-STREAM-INF:") }.map(LadderTests.attributes)
        #expect(iFrames.map { ($0["URI"] ?? "").replacingOccurrences(of: "\"", with: "") } == expectedOrder.map { "\($0)/iframes.m3u8" })
        // Each codec's ladder alone, for players that stay on one codec.
        for (_, name, tag) in Self.codecs + [(.h264, "h264", "avc1")] {
            let alone = try String(contentsOfFile: "\(video.after)/master-\(name).m3u8", encoding: .utf8)
            let uris = alone.split(separator: "\n").filter { !$0.hasPrefix("#") }
            #expect(uris.count == 4)
            #expect(alone.components(separatedBy: "CODECS=\"\(tag)").count - 1 == 8, "\(name): 4 variants and 4 I-frame streams")
        }
    }

    @Test(.enabled(if: Tool.exists("gst-launch-1.0"), "GStreamer is not installed"))
    func gstreamerPlaysEachCodecsPlaylistToTheEnd() async throws {
        let video = try await Shared.shared.published()
        let server = try PlaybackTests.Server(root: video.after)
        // Each codec's rungs, every frame decoded at the rung's size (whichever of GStreamer's
        // decoders for the codec playbin3 picks) and taken by the sink.
        for (playlist, size) in [("av1-360p", (360, 640)), ("hevc-360p", (360, 640)), ("av1-1080p", (1080, 1920)), ("hevc-1080p", (1080, 1920))] {
            let uri = "http://127.0.0.1:\(server.port)/\(playlist)/index.m3u8"
            let played = try GStreamerPlayback.play(uri, size: size)
            let packets = try Tool.ffprobe(["-count_packets", "-select_streams", "v", "-show_entries", "stream=nb_read_packets", uri])
            #expect(played.ended, "\(playlist) did not play to the end: \(played.summary)")
            #expect(played.frameTimes.count == packets.list("streams").first?.int("nb_read_packets"), "\(playlist): \(played.summary)")
            #expect(!played.result.stderr.contains("WARNING"), "\(playlist): \(played.summary)")
        }
    }

    /// Chromium decodes the AV1 1080p rung in software: played alone (a one-variant master with the
    /// published CODECS), so no bandwidth guess decides the rung. The full AV1 master plays to the
    /// end at whichever rungs the player picks.
    @Test func chromiumPlaysTheAV1TopRungAndTheAV1LadderToTheEnd() async throws {
        try #require(Chromium.binary != nil, "Chromium is not installed: `make test-deps` installs Debian's chromium")
        let video = try await Shared.shared.published()
        let server = try PlaybackTests.Server(root: video.after)
        try Chromium.playerPage().write(toFile: "\(video.after)/player.html", atomically: true, encoding: .utf8)
        try Self.oneVariantMaster(of: "\(video.after)/master-av1.m3u8", uri: "av1-1080p/index.m3u8",
                                  to: "\(video.after)/master-av1-1080p.m3u8")
        let top = try Chromium.play("http://127.0.0.1:\(server.port)/player.html?src=master-av1-1080p.m3u8", timeout: 120)
        #expect(top["ended"] as? Bool == true && top["error"] is NSNull, "\(top)")
        #expect(top["videoHeight"] as? Int == 1920, "software AV1 at the 1080p rung: \(top)")
        let ladder = try Chromium.play("http://127.0.0.1:\(server.port)/player.html?src=master-av1.m3u8", timeout: 120)
        #expect(ladder["ended"] as? Bool == true && ladder["error"] is NSNull, "\(ladder)")
        #expect([416, 640, 1280, 1920].contains(ladder["videoHeight"] as? Int ?? 0), "one of the AV1 rungs: \(ladder)")
    }

    /// Writes a master naming only `uri`, with its published `#EXT-X-STREAM-INF` line.
    static func oneVariantMaster(of master: String, uri: String, to path: String) throws {
        let lines = try String(contentsOfFile: master, encoding: .utf8).split(separator: "\n").map(String.init)
        let at = try #require(lines.firstIndex(of: uri), "\(uri) is not in \(master)")
        let header = lines.prefix { !$0.hasPrefix("#EXT-X-STREAM-INF") && !$0.hasPrefix("#EXT-X-I-FRAME") }
        try (header + [lines[at - 1], uri]).joined(separator: "\n").appending("\n").write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// Longer than FFmpeg's 10 s interleaving deadline: the copied sound must still land in the
    /// segment of its own time, as in the H.264 rung, not all in the first one.
    @Test func copiedSoundStaysInEachSegmentOfALongVideo() async throws {
        let long = try await Fixtures.shared.generated("hot_long_360p.mp4", [
            "-f", "lavfi", "-i", "testsrc2=s=360x640:r=30:d=16", "-f", "lavfi", "-i", "sine=f=440:d=16:sample_rate=48000",
            "-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "128k"])
        let video = try Self.publish("long", file: long)
        #expect(video.hotResult == "published")
        for rung in ["234p", "360p"] {
            let reference = try Self.soundBySegment("\(video.after)/\(rung)")
            #expect(reference.count == 17 && reference.allSatisfy { !$0.isEmpty }, "\(rung): \(reference.map(\.count))")
            for (_, name, _) in Self.codecs {
                #expect(try Self.soundBySegment("\(video.after)/\(name)-\(rung)") == reference, "\(name)-\(rung): sound per segment")
            }
        }
    }

    /// The sound packets (time and size) of each segment of a rung, read from the init segment and
    /// that segment alone.
    static func soundBySegment(_ directory: String) throws -> [[String]] {
        let header = try Data(contentsOf: URL(fileURLWithPath: "\(directory)/init.mp4"))
        return try Checks.playlist(directory).segments.enumerated().map { index, segment in
            let joined = Paths.scratch("hot-segment-\(index).mp4")
            try (header + Data(contentsOf: URL(fileURLWithPath: "\(directory)/\(segment.uri)"))).write(to: URL(fileURLWithPath: joined))
            return try Tool.ffprobe(["-select_streams", "a:0", "-show_entries", "packet=pts,size", joined])
                .list("packets").map { "\($0.string("pts") ?? "") \($0.string("size") ?? "")" }
        }
    }

    /// A video never published gets all three ladders in one pass; an app upload's own H.264
    /// stays its top rung, and the new rungs take its keyframes and the same encoded sound.
    @Test func aVideoNotPublishedYetGetsEveryLadderInOnePass() async throws {
        let upload = try await PassthroughTests.appUpload()
        let out = Paths.scratch("hot-fresh")
        try? FileManager.default.removeItem(atPath: out)
        let run = try Self.ingestd(["transcode", upload, "--out", out, "--preset", Self.hotPreset, "--no-progress"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try PassthroughTests.videoPacketsMD5("\(out)/1080p/index.m3u8") == PassthroughTests.videoPacketsMD5(upload),
                "the top H.264 rung is the upload's packets")
        let keyframes = try Checks.frames("\(out)/1080p/index.m3u8").filter(\.key).map(\.time)
        let sound = try Self.soundPackets("\(out)/1080p/index.m3u8")
        for (_, name, _) in Self.codecs {
            #expect(try Checks.frames("\(out)/\(name)-1080p/index.m3u8").filter(\.key).map(\.time) == keyframes, "\(name)")
            #expect(try Self.soundPackets("\(out)/\(name)-1080p/index.m3u8") == sound, "\(name)")
        }
    }

    @Test func aLadderCutElsewhereIsRefusedNamingWhatDiffers() throws {
        let (archive, cdn, id) = try Self.archive("mismatch")
        var other = Preset.builtIn
        other.name = "other"
        other.video.initialSegmentSeconds = [1, 1]
        let path = Paths.scratch("hot-mismatch/other.json")
        try other.canonicalJSON().write(to: URL(fileURLWithPath: path))
        #expect(try Self.reprocess(archive, cdn, ["--preset", path]) == "published")
        let masterBefore = try String(contentsOfFile: "\(cdn)/\(id)/master.m3u8", encoding: .utf8)
        let run = try Self.ingestd(["reprocess", archive, "--cdn", cdn, "--json", "--preset", Self.hotPreset])
        #expect(run.status == 1)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let item = try #require(report.list("items").first)
        #expect(item.string("result") == "failed")
        let error = item.string("error") ?? ""
        #expect(error.hasPrefix("published_mismatch: ") && error.contains("/234p/index.m3u8") && error.contains("segments of [30, 30, 30, 30, 30, 30] frames where the plan cuts [15, 15, 30, 30, 30, 30, 30]")
                && error.contains("other"), "\(error)")
        #expect(try String(contentsOfFile: "\(cdn)/\(id)/master.m3u8", encoding: .utf8) == masterBefore, "the published version stays")
    }

    /// The shared phone video's first hot run was killed (-9) while it wrote its AV1 rungs: the
    /// H.264 version stayed published, and the run after it (the orphaned job died with its
    /// parent) published the hot version once, its staging gone.
    @Test func killNineMidHotReprocessThenRerunPublishesOnce() async throws {
        let video = try await Shared.shared.published()
        let killed = try #require(video.killed)
        #expect(killed.masterKept, "the H.264 version stays published")
        #expect(!killed.hotManifestWritten)
        #expect(video.hotResult == "published")
        let hotVersion = (video.after as NSString).lastPathComponent
        let entries = Daemon.entries("\(video.cdn)/\(video.id)")
        #expect(entries.filter { $0.contains(".staging-") }.isEmpty, "staging left: \(entries)")
        #expect(entries.filter { $0 == hotVersion }.count == 1)
        let manifest = try JSONDecoder().decode(ReadyManifest.self, from: Data(contentsOf: URL(fileURLWithPath: "\(video.cdn)/\(video.id)/manifest.json")))
        #expect(manifest.renditions.count == 12)
        #expect(manifest.renditions.allSatisfy { FileManager.default.fileExists(atPath: "\(video.cdn)/\(video.id)/\($0.playlist)") })
        #expect(video.rerunResult == "skipped")
    }
}
