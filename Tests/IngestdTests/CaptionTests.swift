import IngestdTesting
import Foundation
import Testing
import Ingest
import Transcode

/// Captions from the app, as a viewer gets them: a two-clip upload whose clips bring their own
/// tracks (one trimmed), published, served by nginx with deploy/nginx/ingestd-cdn.conf and read
/// by the spec client (`hls_viewer.py`), GStreamer and Chromium.
@Suite struct CaptionTests {
    /// Clip a (3 s) and clip b (3 s, trimmed to 0.5–2.5 s), each with a track on its own timeline.
    static let clipA = """
        WEBVTT

        00:00:00.500 --> 00:00:01.200
        <b>one</b> <script>alert(1)</script>

        00:00:01.500 --> 00:00:02.500
        two &amp; <img src=x onerror=alert(1)>more

        00:00:02.800 --> 00:00:03.600
        runs past the clip
        """
    static let clipB = "1\r\n00:00:00,100 --> 00:00:00,400\r\ncut by the trim\r\n\r\n2\r\n00:00:01,000 --> 00:00:01,800\r\n"
        + "<font color=\"red\">three</font>\r\n\r\n3\r\n00:00:02,200 --> 00:00:02,900\r\nfour, cut at the trim's end\r\n"
    /// Where each cue must land on the output (clip b starts at 3.0 s, its 0.5 s cut away).
    static let expected: [(start: Double, end: Double, text: String)] = [
        (0.5, 1.2, "one"), (1.5, 2.5, "two"), (2.8, 3.0, "runs past the clip"), (3.5, 4.3, "three"), (4.7, 5.0, "four"),
    ]

    static func upload() async throws -> String {
        let x264 = ["-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p"]
        let upload = try await Fixtures.shared.upload("captions", files: [
            "a.mp4": SyncMarks.clip(width: 360, height: 640, fps: "30", seconds: 3, video: x264),
            "b.mp4": SyncMarks.clip(width: 360, height: 640, fps: "30", seconds: 3, video: x264),
        ], manifest: """
            {"id": "captions", "clips": [
              {"file": "a.mp4", "captions": [{"file": "a.vtt", "language": "en"}]},
              {"file": "b.mp4", "start": 0.5, "end": 2.5, "captions": [{"file": "b.srt", "language": "en"}]}]}
            """)
        try clipA.write(toFile: "\(upload)/a.vtt", atomically: true, encoding: .utf8)
        try clipB.write(toFile: "\(upload)/b.srt", atomically: true, encoding: .utf8)
        return upload
    }

    /// Every published cue lands within 40 ms of its place on the output timeline, read as a
    /// player reads it: the spool daemon publishes the upload as it grows, nginx serves the CDN,
    /// and the spec client views it from first sight (the first master it sees already names the
    /// subtitles group); each cue's time is taken through its segment's `X-TIMESTAMP-MAP`, less
    /// the video's first presentation time (from the segments the same client fetched). A cue
    /// the trim cut is not published; every variant names the group; no markup a browser would
    /// run survives; the whole track says the same; GStreamer fetches the subtitle playlist with
    /// the video; Chromium shows the right cue at three instants.
    @Test(.enabled(if: NginxCDN.binary != nil, "nginx is not installed"))
    func perClipCaptionsLandOnTheirFramesForEveryClient() async throws {
        let base = Paths.scratch("captions-\(UUID().uuidString.prefix(8))")
        let spool = "\(base)/spool", cdn = "\(base)/cdn"
        let daemon = try Daemon(spool: spool, cdn: cdn, extra: ["--jobs", "1"])
        let nginx = try NginxCDN(root: cdn, directory: "\(base)/nginx")
        try Daemon.drop(try await Self.upload(), into: spool, as: "captions")
        try Daemon.wait(timeout: 120, "the video's directory") { GrowingVideoTests.video(cdn) != nil }
        let id = try #require(GrowingVideoTests.video(cdn).map { ($0 as NSString).lastPathComponent })
        let fetched = "\(base)/fetched"
        let viewed = try Tool.run("python3", ["\(Paths.root)/Tests/IngestdTesting/hls_viewer.py", nginx.url("\(id)/master.m3u8"),
                                              "--all-variants", "--timeout", "180", "--segments-dir", fetched])
        let report = try #require(try JSONSerialization.jsonObject(with: Data(viewed.stdout.utf8)) as? [String: Any], "\(viewed.stderr)")
        let subtitles = report["subtitles"] as? [[String: Any]] ?? []
        #expect(viewed.status == 0 && subtitles.count == 1 && subtitles.first?["ended"] as? Bool == true, "\(viewed.stdout.prefix(1500))")
        try Daemon.wait(timeout: 120, "published") { Daemon.events(spool).contains { $0["event"] as? String == "published" } }
        let video = "\(cdn)/\(id)"
        let manifest = try JSONDecoder().decode(ReadyManifest.self, from: Data(contentsOf: URL(fileURLWithPath: "\(video)/manifest.json")))
        let caption = try #require(manifest.captions?.first)
        #expect(manifest.captions?.count == 1 && caption.language == "en" && caption.name == "English" && caption.source == "app")
        #expect(caption.cues == 5 && caption.text.contains("three") && !caption.text.contains("cut by"), "\(caption)")
        let master = try String(contentsOfFile: "\(video)/master.m3u8", encoding: .utf8)
        #expect(master.contains(#"#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="subs",LANGUAGE="en",NAME="English",DEFAULT=NO,AUTOSELECT=YES,URI=""#
            + caption.playlist + "\""), "\(master)")
        let variants = master.split(separator: "\n").filter { $0.hasPrefix("#EXT-X-STREAM-INF:") }
        #expect(!variants.isEmpty && variants.allSatisfy { $0.hasSuffix(#",SUBTITLES="subs""#) }, "\(master)")

        let firstPTS = try #require(try Checks.frames("\(fetched)/0.mp4").map(\.time).min())
        var cues: [(start: Double, end: Double, text: String)] = []
        for file in Daemon.entries(fetched).filter({ $0.hasPrefix("s0-") }).sorted() {
            let text = try String(contentsOfFile: "\(fetched)/\(file)", encoding: .utf8)
            #expect(!text.contains("<script") && !text.contains("<img") && !text.contains("<font") && !text.contains("onerror"), "\(text)")
            for cue in try Self.cues(text, firstPTS: firstPTS) where !cues.contains(where: { $0.text == cue.text && abs($0.start - cue.start) < 0.001 }) {
                cues.append(cue)
            }
        }
        #expect(cues.count == Self.expected.count, "\(cues)")
        for (cue, want) in zip(cues, Self.expected) {
            #expect(abs(cue.start - want.start) <= 0.040 && abs(cue.end - want.end) <= 0.040 && cue.text.contains(want.text),
                    "\(cue) should be \(want)")
        }
        let whole = try Self.cues(String(contentsOfFile: "\(video)/\(caption.track)", encoding: .utf8), firstPTS: 0)
        #expect(whole.map(\.text) == cues.map(\.text) && zip(whole, cues).allSatisfy { abs($0.start - $1.start) <= 0.002 }, "\(whole)")

        if Tool.exists("gst-launch-1.0") {
            let played = try GStreamerPlayback.play(nginx.url("\(id)/master.m3u8"), timeout: 120)
            #expect(played.ended, "\(played.summary)")
            let asked = Set(nginx.requests.filter { $0.status == 200 }.map(\.path))
            let directory = (caption.playlist as NSString).deletingLastPathComponent
            let segments = Daemon.entries("\(video)/\(directory)").filter { $0.hasSuffix(".vtt") }
            #expect(asked.contains("/\(id)/\(caption.playlist)") && segments.allSatisfy { asked.contains("/\(id)/\(directory)/\($0)") },
                    "GStreamer fetched the subtitles: \(asked.sorted())")
        }
        if Chromium.binary != nil {
            let page = try Tool.run("python3", ["\(Paths.root)/Tests/IngestdTesting/chromium_captions.py", "page"])
            try page.stdout.write(toFile: "\(cdn)/captions.html", atomically: true, encoding: .utf8)
            let shown = try Tool.run("python3", ["\(Paths.root)/Tests/IngestdTesting/chromium_captions.py",
                                                 nginx.url("captions.html") + "?mp4=\(id)/\(manifest.mp4)&track=\(id)/\(caption.track)"
                                                 + "&hls=\(id)/master.m3u8&at=0.8,2.0,3.9", "60"],
                                     environment: Chromium.binary.map { ["CHROMIUM": $0] } ?? [:])
            let answer = try #require(try JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as? [String: Any], "\(shown.stderr)")
            let instants = answer["mp4"] as? [[String: Any]] ?? []
            let texts = instants.map { ($0["cues"] as? [String] ?? []).joined(separator: "|") }
            #expect(texts.count == 3 && texts[0].contains("one") && texts[1].contains("two") && texts[2].contains("three"), "\(answer)")
            if let hls = answer["hls"] as? [[String: Any]] {  // only where Chromium's own HLS player exposes the rendition
                #expect(hls.map { ($0["cues"] as? [String] ?? []).joined() }.enumerated().allSatisfy { !$0.element.isEmpty }, "\(answer)")
            }
        }
        _ = daemon
    }

    /// A WebVTT file's cues, each time through its `X-TIMESTAMP-MAP` (if any) less `firstPTS`.
    static func cues(_ text: String, firstPTS: Double) throws -> [(start: Double, end: Double, text: String)] {
        func seconds(_ stamp: Substring) -> Double {
            let parts = stamp.split(separator: ":").compactMap { Double($0) }
            return parts.reduce(0) { $0 * 60 + $1 }
        }
        var shift = 0.0
        if let map = text.split(separator: "\n").first(where: { $0.hasPrefix("X-TIMESTAMP-MAP=") }) {
            let fields = Dictionary(uniqueKeysWithValues: map.dropFirst("X-TIMESTAMP-MAP=".count).split(separator: ",").map { field in
                let parts = field.split(separator: ":", maxSplits: 1)
                return (String(parts[0]), parts.count > 1 ? parts[1] : "")
            })
            shift = (Double(fields["MPEGTS"] ?? "0") ?? 0) / 90_000 - seconds(fields["LOCAL"] ?? "0") - firstPTS
        }
        return text.components(separatedBy: "\n\n").compactMap { block in
            let lines = block.split(separator: "\n")
            guard let timing = lines.firstIndex(where: { $0.contains(" --> ") }) else { return nil }
            let times = lines[timing].components(separatedBy: " --> ")
            return (seconds(Substring(times[0])) + shift, seconds(Substring(times[1].split(separator: " ")[0])) + shift,
                    lines[(timing + 1)...].joined(separator: "\n"))
        }
    }
}
