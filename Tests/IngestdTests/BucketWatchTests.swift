import Foundation
import IngestdTesting
import Testing

/// `watch --cdn s3://…` (#30): the spool daemon uploads each attempt under its own prefix and
/// publishes it by creating `<id>/current.json`; a real SeaweedFS server, boto3 and ffprobe.
@Suite(.enabled(if: ObjectStoreServer.binary != nil && S3Check.available, "SeaweedFS or boto3 is not installed"))
struct BucketWatchTests {
    @Test func anUploadDroppedInTheSpoolIsPublishedToTheBucket() throws {
        let server = try ObjectStoreServer(name: "watch", publicRead: true)
        let spool = Paths.scratch("bucket-watch-spool")
        try? FileManager.default.removeItem(atPath: spool)
        try FileManager.default.createDirectory(atPath: "\(spool)/incoming", withIntermediateDirectories: true)
        let daemon = try BucketFleetTests.Worker(["watch", "--spool", spool, "--cdn", "s3://media/cdn", "--jobs", "1", "--settle", "0.5",
                                                  "--backoff", "0.2", "--s3-endpoint", server.endpoint],
                                                 environment: server.environment, name: "watch")
        let source = Paths.smallSample
        try Daemon.drop(source, into: spool, as: "clip.mp4")
        try Daemon.wait(timeout: 180, "the upload to be filed") { Daemon.entries("\(spool)/archive").count == 1 || !daemon.process.isRunning }
        let id = try #require(Daemon.entries("\(spool)/archive").first, "\(daemon.output)")

        let pointer = Paths.scratch("bucket-watch-current.json")
        _ = try S3Check.run(server, ["get", server.bucket, "cdn/\(id)/current.json", pointer])
        let current = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: pointer))) as? [String: Any])
        let version = try #require(current.string("version"))
        #expect(version == "t1", "the first attempt's prefix")
        #expect(current.string("master") == "s3://media/cdn/\(id)/\(version)/master.m3u8")
        let keys = try #require(try S3Check.run(server, ["list", server.bucket, "cdn/\(id)/"]) as? [String])
        #expect(keys.contains("cdn/\(id)/\(version)/master.m3u8") && keys.contains("cdn/\(id)/\(version)/manifest.json"), "\(keys)")
        #expect(keys.allSatisfy { $0 == "cdn/\(id)/current.json" || $0.hasPrefix("cdn/\(id)/\(version)/") }, "\(keys)")
        #expect(Daemon.events(spool).contains { $0.string("event") == "published" && $0.string("version") == "s3://media/cdn/\(id)/\(version)" })

        let sourceSeconds = try #require((try Tool.ffprobe(["-show_entries", "format=duration", source])["format"] as? [String: Any])?.double("duration"))
        // The ladder from the bucket over HTTP, and its MP4 through a presigned URL.
        let url = try Tool.run(Paths.binary, ["url", "s3://media/cdn/\(id)/\(version)/video.mp4", "--s3-endpoint", server.endpoint],
                               environment: server.environment)
        #expect(url.status == 0, "\(url.stderr)")
        for published in ["\(server.endpoint)/media/cdn/\(id)/\(version)/360p/index.m3u8", url.stdout.trimmingCharacters(in: .whitespacesAndNewlines)] {
            let probe = try Tool.ffprobe(["-show_entries", "format=duration", published])
            let seconds = try #require((probe["format"] as? [String: Any])?.double("duration"))
            #expect(abs(seconds - sourceSeconds) < 0.2, "\(published): \(seconds) s of \(sourceSeconds) s")
        }
        kill(daemon.process.processIdentifier, SIGTERM)
        daemon.process.waitUntilExit()
        #expect(daemon.process.terminationStatus == 0, "\(daemon.output)")
    }

    /// Where a bucket video plays is said once (``PlaybackPlace``): every path that
    /// `upload.playable`, `upload.published` and `status --job --json` name answers 200 from the
    /// bucket to anyone, and nothing lies outside the version's prefix but `current.json`.
    @Test func everyPathTheWebhooksAndStatusNameIsInTheBucket() throws {
        let server = try ObjectStoreServer(name: "watch-paths", publicRead: true)
        let base = Paths.scratch("bucket-watch-paths")
        try? FileManager.default.removeItem(atPath: base)
        let spool = "\(base)/spool"
        try FileManager.default.createDirectory(atPath: "\(spool)/incoming", withIntermediateDirectories: true)
        let secret = WebhookReceiver.makeSecret()
        try WebhookReceiver.writeSecret(secret, to: "\(base)/secret")
        let receiver = try WebhookReceiver(secret: secret, directory: "\(base)/receiver")
        let daemon = try BucketFleetTests.Worker(["watch", "--spool", spool, "--cdn", "s3://media/cdn", "--jobs", "1", "--settle", "0.5",
                                                  "--backoff", "0.2", "--s3-endpoint", server.endpoint,
                                                  "--webhook", receiver.url, "--webhook-secret-file", "\(base)/secret"],
                                                 environment: server.environment, name: "watch-paths")
        try Daemon.drop(Paths.smallSample, into: spool, as: "clip.mp4")
        // The folder is filed after `upload.published` is recorded (docs/WEBHOOKS.md): wait for both.
        try Daemon.wait(timeout: 180, "both webhooks delivered and the upload filed") {
            (Set(receiver.deliveries.filter { $0.status == 204 }.compactMap(\.type)).isSuperset(of: ["upload.playable", "upload.published"])
                && Daemon.entries("\(spool)/archive").count == 1) || !daemon.process.isRunning
        }
        let id = try #require(Daemon.entries("\(spool)/archive").first, "\(daemon.output)")
        let playable = try #require(receiver.deliveries.first { $0.type == "upload.playable" })
        let published = try #require(receiver.deliveries.first { $0.type == "upload.published" })
        var paths = playable.playedPaths + published.playedPaths
        #expect(playable.playedPaths.count == 1 && published.playedPaths.count >= 6, "\(published.data)")

        let status = try Tool.run(Paths.binary, ["status", "--spool", spool, "--job", id, "--json"])
        let job = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any], "\(status.stdout)")
        let output = try #require(job["output"] as? String, "\(job)")
        let manifest = try #require(job["manifest"] as? [String: Any], "\(job)")
        #expect(output.hasPrefix("s3://media/cdn/\(id)/t"), "the version's prefix: \(output)")
        let relative = String(output.dropFirst("s3://media/cdn/".count))
        paths += [manifest["master"], manifest["mp4"]].compactMap { $0 as? String }.map { "\(relative)/\($0)" }

        for path in paths {
            let got = try Tool.run("curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "\(server.endpoint)/media/cdn/\(path)"])
            #expect(got.stdout == "200", "\(path): \(got.stdout)")
        }
        let keys = try #require(try S3Check.run(server, ["list", server.bucket, "cdn/\(id)/"]) as? [String])
        #expect(keys.allSatisfy { $0 == "cdn/\(id)/current.json" || $0.hasPrefix("cdn/\(relative)/") }, "\(keys)")

        // The console's job page plays the version's ladder from the bucket, read through the
        // console itself (no public URL), in Chromium.
        let console = try ConsoleProcess(["--spool", spool, "--cdn", "s3://media/cdn", "--s3-endpoint", server.endpoint],
                                         directory: base, log: "\(base)/console.log", environment: server.environment)
        let answer = try console.play(job: id, timeout: 60)
        let player = try #require(answer["player"] as? [String: Any], "the job's page has a player: \(answer)")
        #expect(player["src"] as? String == "\(console.base)/console/media/\(relative)/master.m3u8", "\(player)")
        #expect(try console.request("GET", "/console/media/\(relative)/../../../secret.json", token: console.readToken).status == 404)
        #expect((player["currentTime"] as? Double ?? 0) >= 1 && (player["videoHeight"] as? Int ?? 0) > 0, "\(player)")
        #expect((answer["page_errors"] as? [String] ?? []).isEmpty, "\(answer)")
        _ = daemon
    }
}
