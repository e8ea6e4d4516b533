import Foundation
import Synchronization
import IngestdTesting
import Testing

/// Signed playback (issue #67) as a viewer gets it: a spool daemon whose videos are signed, its
/// CDN behind nginx with the repository's rules and the playback key, a growing video played
/// from first sight through `playback-url`'s URL by the RFC 8216 client and GStreamer, and
/// through the docs' Python recipe by Chromium, while its unsigned paths are refused; then its
/// policy flipped both ways with every media file's bytes unchanged. (Each rule, hostile tokens
/// and a rotation: Tests/nginx_cdn_check.sh.)
@Suite(.serialized, .enabled(if: NginxCDN.binary != nil, "nginx is not installed"))
struct SignedPlaybackTests {
    @Test func aSignedVideoPlaysOnlyThroughSignedURLsFromFirstSightToItsEnd() async throws {
        let base = Paths.scratch("signed-playback")
        try? FileManager.default.removeItem(atPath: base)
        let (spool, cdn, key) = ("\(base)/spool", "\(base)/cdn", "\(base)/playback.key")
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        let line = "plsec_" + Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        _ = FileManager.default.createFile(atPath: key, contents: Data((line + "\n").utf8), attributes: [.posixPermissions: 0o600])
        let (upload, preset) = try await GrowingVideoTests.lightUpload(presetPath: "\(base)/preset.json")
        let daemon = try Daemon(spool: spool, cdn: cdn, extra: ["--playback", "signed", "--preset", preset])
        let nginx = try NginxCDN(root: cdn, directory: "\(base)/nginx", secrets: [line])
        try Daemon.drop(upload, into: spool, as: "clip.mp4")

        // First sight: the master is in view, and the marker was there before it.
        var id = ""
        try Daemon.wait(timeout: 120, "the video's master") {
            guard let video = GrowingVideoTests.video(cdn), FileManager.default.fileExists(atPath: "\(video)/master.m3u8") else { return false }
            id = (video as NSString).lastPathComponent
            return true
        }
        #expect(FileManager.default.fileExists(atPath: "\(cdn)/\(id)/.playback-signed"), "signed before its first master")
        let signed = try Tool.run(Paths.binary, ["playback-url", id, "--expires", "3600", "--key-file", key, "--base", nginx.url("")])
        let url = signed.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(signed.status == 0 && url.hasPrefix(nginx.url("\(id)/p-")), "\(signed.stdout) \(signed.stderr)")
        let unsigned = try Tool.run("curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", nginx.url("\(id)/master.m3u8")])
        #expect(unsigned.stdout == "403", "the growing video's unsigned master is refused: \(unsigned.stdout)")
        // GStreamer plays the docs' recipe's URL meanwhile, from first sight too.
        let recipe = try Tool.run("python3", ["\(Paths.root)/Tests/IngestdTesting/playback_url.py", nginx.url(""), id, key, "3600"])
        let recipeURL = recipe.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(recipeURL == url, "playback-url and the Python recipe sign the same URL")
        let gstreamer = Mutex<GStreamerPlayback?>(nil), gstreamerDone = DispatchSemaphore(value: 0)
        Thread {
            let played = try? GStreamerPlayback.play(recipeURL, timeout: 240)
            gstreamer.withLock { $0 = played }
            gstreamerDone.signal()
        }.start()
        let fetched = "\(base)/viewer"
        try FileManager.default.createDirectory(atPath: fetched, withIntermediateDirectories: true)
        let viewed = try Tool.run("python3", ["\(Paths.root)/Tests/IngestdTesting/hls_viewer.py", url, "--all-variants", "--timeout", "300",
                                              "--segments-dir", fetched])
        let report = try #require(try JSONSerialization.jsonObject(with: Data(viewed.stdout.utf8)) as? [String: Any], "\(viewed.stderr)")
        let variants = report["variants"] as? [[String: Any]] ?? []
        #expect(viewed.status == 0 && !variants.isEmpty && variants.allSatisfy { $0["ended"] as? Bool == true && ($0["errors"] as? [Any])?.isEmpty == true },
                "the spec client played the signed URL from first sight to its end: \(viewed.stdout.prefix(1500))")
        for file in Daemon.entries(fetched) where file.hasSuffix(".mp4") {
            let decoded = try Tool.run("ffmpeg", ["-v", "error", "-nostdin", "-i", "\(fetched)/\(file)", "-f", "null", "-"])
            #expect(decoded.status == 0 && decoded.stderr.isEmpty, "every frame the spec client fetched decodes: \(file) \(decoded.stderr.prefix(300))")
        }
        #expect(!Daemon.entries(fetched).isEmpty, "the spec client kept what it fetched")
        try Daemon.wait(timeout: 180, "the video published") { Daemon.entries("\(spool)/archive") == [id] }

        gstreamerDone.wait()
        // A live playlist is joined near its edge (RFC 8216 6.3.3): every frame from there to the end.
        let times = gstreamer.withLock { $0?.frameTimes ?? [] }, ended = gstreamer.withLock { $0?.ended == true }
        let (first, last) = (times.min() ?? 99, times.max() ?? 0)
        #expect(ended && last > 19.9 && times.count == Int(((last - first) * 30).rounded()) + 1 && times.count >= 30,
                "GStreamer played the recipe's URL from first sight to its end, no frame missing: \(times.count) from \(first) s to \(last) s")
        // Chromium's native player, the published video, by the recipe's URL.
        try Chromium.playerPage().write(toFile: "\(cdn)/player.html", atomically: true, encoding: .utf8)
        let chromium = try Chromium.play(nginx.url("player.html") + "?src=/" + recipeURL.dropFirst(nginx.url("").count), timeout: 120)
        #expect(chromium["ended"] as? Bool == true && (chromium["failed_requests"] as? [Any])?.isEmpty == true, "Chromium played it: \(chromium)")

        // What the app sees: the policy, the paths unsigned.
        let status = try Tool.run(Paths.binary, ["status", "--spool", spool, "--job", id, "--json"])
        let job = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
        #expect(job["playback"] as? String == "signed" && (job["manifest"] as? [String: Any])?["playback"] as? String == "signed", "\(status.stdout.prefix(400))")

        // Flipped both ways: effective for the next request, no byte of the video changed.
        let before = try Self.digests(of: "\(cdn)/\(id)")
        let segment = try #require(before.keys.first { $0.hasSuffix(".m4s") })
        func code(_ path: String) throws -> String { try Tool.run("curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", nginx.url(path)]).stdout }
        #expect(try code("\(id)/\(segment)") == "403")
        let made = try Tool.run(Paths.binary, ["playback", "--spool", spool, "--cdn", cdn, id, "public", "--json"])
        #expect(made.status == 0 && made.stdout.contains("\"result\":\"changed\""), "\(made.stdout) \(made.stderr)")
        #expect(try code("\(id)/\(segment)") == "200" && code("\(id)/master.m3u8") == "200", "public from the next request")
        let again = try Tool.run(Paths.binary, ["playback", "--spool", spool, "--cdn", cdn, id, "signed", "--json"])
        let purge = (try JSONSerialization.jsonObject(with: Data(again.stdout.utf8)) as? [String: Any])?["purge"] as? [String] ?? []
        #expect(again.status == 0 && purge.contains("\(id)/master.m3u8") && purge.contains("\(id)/\(segment)"), "\(again.stdout.prefix(600))")
        #expect(try code("\(id)/\(segment)") == "403" && code(String(url.dropFirst(nginx.url("").count))) == "200", "signed again")
        #expect(try Self.digests(of: "\(cdn)/\(id)") == before, "every media file's sha256 unchanged")
        let events = Daemon.events(spool).filter { $0["event"] as? String == "playback_changed" }.compactMap { $0["playback"] as? String }
        #expect(events == ["public", "signed"])
        let missing = try Tool.run(Paths.binary, ["playback", "--spool", spool, "--cdn", cdn, "no-such-video", "public"])
        #expect(missing.status == 1, "\(missing.stdout)")

        // The console: its player signs its own 10-minute URL from the public CDN; an operator flips
        // the policy, a read token and another site cannot.
        let console = try ConsoleProcess(["--spool", spool, "--cdn", cdn, "--cdn-url", nginx.url(""), "--playback-key-file", key],
                                         directory: base, log: "\(base)/console.log")
        let page = try console.request("GET", "/console/jobs/\(id)", token: console.readToken).body
        let src = try #require(page.firstMatch(of: /src="([^"]+master\.m3u8)"/).map { String($0.1) }, "a player: \(page.suffix(800))")
        #expect(src.hasPrefix(nginx.url("\(id)/p-")) && page.contains("data-playback=\"signed\"") && !page.contains("Make it public"),
                "signed, and no button for a read token: \(src)")
        #expect(try code(String(src.dropFirst(nginx.url("").count))) == "200", "the console's own signed URL plays")
        #expect(try console.request("POST", "/console/jobs/playback", token: console.readToken, form: "id=\(id)&policy=public").status == 403)
        #expect(try console.request("POST", "/console/jobs/playback", token: console.operateToken, headers: ["Sec-Fetch-Site": "cross-site"],
                                    form: "id=\(id)&policy=public").status == 403)
        #expect(try code("\(id)/\(segment)") == "403", "nothing changed by the refusals")
        let flipped = try console.request("POST", "/console/jobs/playback", token: console.operateToken, headers: ["Accept": "application/json"],
                                          form: "id=\(id)&policy=public")
        let afterFlip = try code("\(id)/\(segment)")
        #expect(flipped.status == 200 && afterFlip == "200", "\(flipped)")
        _ = daemon
    }

    /// The fleet with a bucket CDN behind nginx (deploy/nginx/ingestd-bucket.conf): `submit
    /// --playback signed` makes a worker mark the video in the bucket before it mirrors a file;
    /// nginx asks the bucket for the marker, refuses the unsigned master, plays the signed URL
    /// and a public video's unsigned one; `ingestd playback … public` opens it.
    @Test(.enabled(if: PostgresServer.binaries != nil && ObjectStoreServer.binary != nil && S3Check.available,
                   "PostgreSQL, SeaweedFS or boto3 is not installed"))
    func theFleetMarksASignedVideoInTheBucketAndNginxInFrontEnforcesIt() throws {
        let base = Paths.scratch("signed-fleet")
        try? FileManager.default.removeItem(atPath: base)
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        let database = try PostgresServer(name: "signed-fleet")
        let s3 = try ObjectStoreServer(name: "signed-fleet", publicRead: true)
        for name in ["signed.mp4", "open.mp4"] { _ = try S3Check.run(s3, ["put", s3.bucket, "uploads/\(name)", Paths.smallSample]) }
        let key = "\(base)/playback.key"
        let line = "plsec_" + Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        _ = FileManager.default.createFile(atPath: key, contents: Data((line + "\n").utf8), attributes: [.posixPermissions: 0o600])
        let submit = ["submit", "--database", database.url, "--json", "--s3-endpoint", s3.endpoint, "--uploads", "s3://media/uploads"]
        func id(_ result: Tool.Result) -> String? {
            ((try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8))) as? [[String: String]])?.first?["id"]
        }
        let signed = try #require(id(try Tool.run(Paths.binary, submit + ["--playback", "signed", "s3://media/uploads/signed.mp4"], environment: s3.environment)))
        let open = try #require(id(try Tool.run(Paths.binary, submit + ["s3://media/uploads/open.mp4"], environment: s3.environment)))
        let worker = try BucketFleetTests.Worker(["worker", "--database", database.url, "--cdn", "s3://media/cdn", "--uploads", "s3://media/uploads",
                                                  "--jobs", "1", "--poll", "0.5", "--lease", "20", "--s3-endpoint", s3.endpoint],
                                                 environment: s3.environment, name: "signed")
        try Daemon.wait(timeout: 240, "both published") {
            (try? database.sql("SELECT count(*) FROM ingestd_jobs WHERE state = 'published'")) == "2" || !worker.process.isRunning
        }
        #expect(try database.sql("SELECT id || ' ' || coalesce(playback, '-') FROM ingestd_jobs ORDER BY id").split(separator: "\n").sorted()
                 == ["\(open) public", "\(signed) signed"].sorted(), "\(worker.output.suffix(800))")
        let keys = try #require(try S3Check.run(s3, ["list", s3.bucket, "cdn/\(signed)/"]) as? [String])
        #expect(keys.contains("cdn/\(signed)/.playback-signed"), "\(keys)")
        let version = try database.sql("SELECT place->>'version' FROM ingestd_jobs WHERE id = '\(signed)'")
        let status = try Tool.run(Paths.binary, ["status", "--database", database.url, "--job", signed, "--json"])
        #expect(status.stdout.contains("\"playback\" : \"signed\""), "\(status.stdout.prefix(300))")

        let nginx = try NginxCDN(root: base, directory: "\(base)/nginx", secrets: [line], bucket: (s3.endpoint, "/media/cdn"))
        func code(_ path: String) throws -> String { try Tool.run("curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", nginx.url(path)]).stdout }
        let openVersion = try database.sql("SELECT place->>'version' FROM ingestd_jobs WHERE id = '\(open)'")
        #expect(try code("\(signed)/\(version)/master.m3u8") == "403" && code("\(open)/\(openVersion)/master.m3u8") == "200")
        let url = try Tool.run(Paths.binary, ["playback-url", signed, "--expires", "600", "--key-file", key, "--base", nginx.url(""),
                                              "--path", "\(version)/master.m3u8"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let viewed = try Tool.run("python3", ["\(Paths.root)/Tests/IngestdTesting/hls_viewer.py", url, "--all-variants", "--timeout", "120"])
        #expect(viewed.status == 0, "the signed URL plays through nginx in front of the bucket: \(viewed.stdout.prefix(800)) \(viewed.stderr.prefix(300))")
        let made = try Tool.run(Paths.binary, ["playback", "--database", database.url, "--cdn", "s3://media/cdn", "--s3-endpoint", s3.endpoint,
                                               signed, "public"], environment: s3.environment)
        let opened = try code("\(signed)/\(version)/master.m3u8")
        #expect(made.status == 0 && opened == "200", "\(made.stdout) \(made.stderr)")

        // Captions after publish, in the bucket: the track under the version's prefix, its master
        // and manifest replaced there (the spec client gets the subtitles), the row and webhook recorded.
        try "WEBVTT\n\n00:00:00.500 --> 00:00:01.500\nhello\n".write(toFile: "\(base)/en.vtt", atomically: true, encoding: .utf8)
        let captioned = try Tool.run(Paths.binary, ["captions", "--database", database.url, "--cdn", "s3://media/cdn", "--s3-endpoint", s3.endpoint,
                                                    open, "add", "\(base)/en.vtt", "--language", "en"], environment: s3.environment)
        #expect(captioned.status == 0, "\(captioned.stdout) \(captioned.stderr)")
        let subtitled = try Tool.run("python3", ["\(Paths.root)/Tests/IngestdTesting/hls_viewer.py", nginx.url("\(open)/\(openVersion)/master.m3u8"),
                                                 "--timeout", "120"])
        let report = (try? JSONSerialization.jsonObject(with: Data(subtitled.stdout.utf8)) as? [String: Any]) ?? [:]
        let tracks = report["subtitles"] as? [[String: Any]] ?? []
        #expect(subtitled.status == 0 && tracks.count == 1 && tracks.first?["ended"] as? Bool == true, "\(subtitled.stdout.prefix(800))")
        #expect(try database.sql("SELECT manifest->'captions'->0->>'language' FROM ingestd_jobs WHERE id = '\(open)'") == "en")
        let hook = try database.sql("SELECT body FROM ingestd_webhooks WHERE job_id = '\(open)' AND type = 'upload.captions'")
        let data = (try? JSONSerialization.jsonObject(with: Data(hook.utf8)) as? [String: Any])?["data"] as? [String: Any]
        let named = (data?["captions"] as? [[String: Any]])?.first
        // Every path the webhook names resolves through nginx in front of the bucket.
        let paths = [data?["master"], named?["playlist"], named?["track"]].compactMap { $0 as? String }
        #expect(paths.count == 3 && named?["language"] as? String == "en", "\(hook)")
        for path in paths { #expect(try code(path) == "200", "\(path)") }
        _ = worker
    }

    /// The sha256 of each media file under `directory` (not the pointers, records or markers), by path.
    static func digests(of directory: String) throws -> [String: String] {
        let listed = try Tool.run("sh", ["-c", "cd \"$1\" && find . -type f \\( -name '*.m4s' -o -name '*.mp4' -o -name '*.jpg' -o -name '*.webp' \\) "
                                         + "-exec sha256sum {} +", "sh", directory])
        var found: [String: String] = [:]
        for line in listed.stdout.split(separator: "\n") {
            let fields = line.split(separator: " ", maxSplits: 1)
            guard fields.count == 2 else { continue }
            found[String(fields[1].trimmingCharacters(in: .whitespaces).dropFirst(2))] = String(fields[0])
        }
        return found
    }
}
