import Foundation
@testable import Ingest
import IngestdTesting
import Testing

/// The fleet with its uploads and its CDN in a bucket (#30): `submit s3://…`, `worker --cdn
/// s3://…`, a real PostgreSQL and a real SeaweedFS server; boto3 and ffmpeg read the result.
@Suite(.serialized, .enabled(if: PostgresServer.binaries != nil && ObjectStoreServer.binary != nil && S3Check.available,
                             "PostgreSQL, SeaweedFS or boto3 is not installed"))
struct BucketFleetTests {
    final class Worker {
        let process = Process()
        let log: String

        init(_ arguments: [String], environment: [String: String], name: String) throws {
            log = Paths.scratch("bucket-worker-\(name).log")
            _ = FileManager.default.createFile(atPath: log, contents: nil)
            process.executableURL = URL(fileURLWithPath: Paths.binary)
            process.arguments = arguments
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle(forWritingAtPath: log)
            try process.run()
        }

        deinit {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }

        var output: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }
    }

    @Test func uploadsInABucketArePublishedToABucketOncePerJob() throws {
        let database = try PostgresServer(name: "bucket-fleet")
        let s3 = try ObjectStoreServer(name: "bucket-fleet", publicRead: true)
        _ = try S3Check.run(s3, ["put", s3.bucket, "uploads/clip.mp4", Paths.smallSample])
        for name in try FileManager.default.contentsOfDirectory(atPath: Paths.sample("upload")) {
            _ = try S3Check.run(s3, ["put", s3.bucket, "uploads/trip/\(name)", Paths.sample("upload/\(name)")])
            // The same upload, but its first clip is cut short: rejected once fetched, its webhook naming the upload.
            let bad = name == "clip1.mp4" ? Paths.sample("broken_truncated.mp4") : Paths.sample("upload/\(name)")
            _ = try S3Check.run(s3, ["put", s3.bucket, "uploads/badtrip/\(name)", bad])
        }
        let submitArguments = ["submit", "--database", database.url, "--json", "--s3-endpoint", s3.endpoint, "--uploads", "s3://media/uploads"]

        // Refused before anything is queued: wrong credentials, a missing object.
        var wrong = s3.environment
        wrong["AWS_SECRET_ACCESS_KEY"] = "wrong"
        let denied = try Tool.run(Paths.binary, submitArguments + ["s3://media/uploads/clip.mp4"], environment: wrong)
        #expect(denied.status == 66 && denied.stdout.contains("storage_refused") && denied.stdout.contains("s3://media/uploads/clip.mp4"),
                "\(denied.status) \(denied.stdout) \(denied.stderr)")
        let missing = try Tool.run(Paths.binary, submitArguments + ["s3://media/uploads/nothing.mp4"], environment: s3.environment)
        #expect(missing.status == 66 && missing.stdout.contains("input_missing"), "\(missing.status) \(missing.stdout)")
        #expect((try? database.sql("SELECT count(*) FROM ingestd_jobs")) ?? "0" == "0", "nothing queued")

        // Only from under the bucket's uploads root (#29 item 9): another prefix, or a way out of it.
        _ = try S3Check.run(s3, ["put", s3.bucket, "private/clip.mp4", Paths.sample("portrait_rotated.mp4")])
        for outside in ["s3://media/private/clip.mp4", "s3://media/uploads/../private/clip.mp4"] {
            let refused = try Tool.run(Paths.binary, submitArguments + [outside], environment: s3.environment)
            #expect(refused.status != 0 && refused.stdout.contains("outside_uploads"), "\(outside): \(refused.status) \(refused.stdout)")
        }
        let unrooted = try Tool.run(Paths.binary, ["submit", "--database", database.url, "--s3-endpoint", s3.endpoint, "s3://media/uploads/clip.mp4"],
                                    environment: s3.environment)
        #expect(unrooted.status == 78, "no bucket root: \(unrooted.status) \(unrooted.stderr)")
        #expect((try? database.sql("SELECT count(*) FROM ingestd_jobs")) ?? "0" == "0", "nothing queued")

        let submitted = try Tool.run(Paths.binary, submitArguments + ["s3://media/uploads/clip.mp4", "s3://media/uploads/trip/",
                                                                      "s3://media/uploads/badtrip/"], environment: s3.environment)
        #expect(submitted.status == 0, "\(submitted.stderr) \(submitted.stdout)")
        var ids = ((try JSONSerialization.jsonObject(with: Data(submitted.stdout.utf8)) as? [[String: String]]) ?? []).compactMap { $0["id"] }
        #expect(ids.count == 3)
        let badID = ids.removeLast()
        // Rows another producer wrote, naming objects outside the root: rejected, never fetched.
        _ = try database.sql("""
            INSERT INTO ingestd_jobs (id, state, input, input_kind, preset)
            SELECT x.id, 'queued', x.input, 'path', preset FROM ingestd_jobs,
                   (VALUES ('other', 's3://media/private/clip.mp4'), ('dotdot', 's3://media/uploads/../private/clip.mp4')) AS x(id, input)
             WHERE ingestd_jobs.id = '\(ids[0])'
            """)

        let secret = WebhookReceiver.makeSecret(), secretFile = Paths.scratch("bucket-fleet-webhook.secret")
        try WebhookReceiver.writeSecret(secret, to: secretFile)
        let receiver = try WebhookReceiver(secret: secret, directory: Paths.scratch("bucket-fleet-receiver"))
        let worker = try Worker(["worker", "--database", database.url, "--cdn", "s3://media/cdn", "--uploads", "s3://media/uploads", "--jobs", "1",
                                 "--poll", "0.5", "--lease", "20", "--s3-endpoint", s3.endpoint,
                                 "--webhook", receiver.url, "--webhook-secret-file", secretFile], environment: s3.environment, name: "one")
        try Daemon.wait(timeout: 240, "both jobs published") {
            (try? database.sql("SELECT count(*) FROM ingestd_jobs WHERE state = 'published'")) == "2"
        }
        for id in ids {
            let row = try database.sql("SELECT output || ' ' || attempts FROM ingestd_jobs WHERE id = '\(id)'").split(separator: " ")
            let output = String(row[0])
            #expect(output.hasPrefix("s3://media/cdn/\(id)/t"), "the row names the version: \(output)")
            let version = String(output.dropFirst("s3://media/".count))
            let keys = try #require(try S3Check.run(s3, ["list", s3.bucket, "cdn/\(id)/"]) as? [String])
            #expect(!keys.isEmpty && keys.allSatisfy { $0.hasPrefix(version + "/") }, "one version only: \(keys)")
            let master = "\(s3.endpoint)/media/\(version)/master.m3u8"
            let played = try Tool.run("ffmpeg", ["-v", "error", "-i", master, "-map", "0:v:0", "-f", "null", "-"])
            #expect(played.status == 0, "\(id): \(played.stderr)")
            let probe = try Tool.ffprobe(["-show_entries", "format=duration", "\(s3.endpoint)/media/\(version)/360p/index.m3u8"])
            #expect(((probe["format"] as? [String: Any])?.double("duration") ?? 0) > 1, "\(id) plays")
        }
        try Daemon.wait(timeout: 60, "the rows outside the root to end") {
            (try? database.sql("SELECT count(*) FROM ingestd_jobs WHERE state IN ('queued', 'running')")) == "0"
        }
        for id in ["other", "dotdot"] {
            #expect(try database.sql("SELECT state || ' ' || (reason->>'code') FROM ingestd_jobs WHERE id = '\(id)'") == "rejected outside_uploads")
        }
        #expect(try database.sql("SELECT state FROM ingestd_jobs WHERE id = '\(badID)'") == "rejected")
        try Daemon.wait(timeout: 60, "the rejection's webhook") { receiver.deliveries.contains { $0.data["id"] as? String == badID } }
        let rejected = try #require(receiver.deliveries.first { $0.data["id"] as? String == badID })
        #expect(rejected.verified && rejected.type == "upload.rejected" && rejected.data["uploadId"] as? String == "sample-upload-1",
                "an s3:// upload's own id, read from the fetched copy: \(rejected.data)")
        let status = try Tool.run(Paths.binary, ["status", "--database", database.url, "--json"])
        #expect(ids.allSatisfy { status.stdout.contains("s3://media/cdn/\($0)/t") }, "status names each output: \(status.stdout)")
        try Daemon.wait(timeout: 60, "the published webhooks") {
            Set(receiver.deliveries.filter { $0.type == "upload.published" && $0.status == 204 }.compactMap { $0.data["id"] as? String }) == Set(ids)
        }
        for id in ids {
            // Where it plays, as the webhooks and `status --job --json` say: every path answers 200 to anyone.
            var paths = receiver.deliveries.filter { $0.data["id"] as? String == id }.flatMap(\.playedPaths)
            let job = try #require(try JSONSerialization.jsonObject(with: Data(try Tool.run(Paths.binary,
                ["status", "--database", database.url, "--job", id, "--json"]).stdout.utf8)) as? [String: Any])
            let output = try #require(job["output"] as? String, "\(job)")
            let manifest = try #require(job["manifest"] as? [String: Any], "\(job)")
            paths += [manifest["master"], manifest["mp4"]].compactMap { $0 as? String }.map { "\(output.dropFirst("s3://media/cdn/".count))/\($0)" }
            #expect(paths.count >= 8, "\(paths)")
            for path in paths {
                let got = try Tool.run("curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "\(s3.endpoint)/media/cdn/\(path)"])
                #expect(got.stdout == "200", "\(id): \(path): \(got.stdout)")
            }
        }
        _ = worker
    }

    /// kill -9 of a worker while it uploads: another worker takes the job after the lease and
    /// publishes it once; the dead attempt's prefix is named by nothing, and the sweeper deletes
    /// it and nothing else.
    @Test func aWorkerKilledMidUploadLeavesOnlyWhatTheSweeperTakes() throws {
        let database = try PostgresServer(name: "bucket-kill")
        let s3 = try ObjectStoreServer(name: "bucket-kill", publicRead: true)
        let proxy = try HTTPFaultProxy(target: s3.port)
        _ = try S3Check.run(s3, ["put", s3.bucket, "uploads/clip.mp4", Paths.sample("hdr_hlg.mp4")])
        let submitted = try Tool.run(Paths.binary, ["submit", "--database", database.url, "--json", "--s3-endpoint", s3.endpoint, "--uploads", "s3://media/uploads",
                                                    "s3://media/uploads/clip.mp4"], environment: s3.environment)
        let id = try #require(((try JSONSerialization.jsonObject(with: Data(submitted.stdout.utf8)) as? [[String: String]]) ?? []).first?["id"])
        try proxy.delay(1.5, matching: "PUT /media/cdn/")  // a slow link to the bucket
        let arguments = ["worker", "--database", database.url, "--cdn", "s3://media/cdn", "--uploads", "s3://media/uploads", "--jobs", "1",
                         "--poll", "0.5"]
        // The killed worker's lease is short (the test waits it out); the second's is long, so a
        // loaded host's late renewal never costs it its attempt (a second dead prefix).
        var first: Worker? = try Worker(arguments + ["--lease", "4", "--s3-endpoint", "http://127.0.0.1:\(proxy.port)"], environment: s3.environment, name: "killed")
        try Daemon.wait(timeout: 180, "the first worker's upload under way") {
            proxy.requests.contains { $0.hasPrefix("PUT /media/cdn/\(id)/t") && $0.hasSuffix(" 200") }
        }
        kill(first!.process.processIdentifier, SIGKILL)
        first = nil
        let dead = try #require(proxy.requests.first { $0.hasPrefix("PUT /media/cdn/\(id)/t") }?.split(separator: "/").dropFirst(4).first)
        let second = try Worker(arguments + ["--lease", "30", "--s3-endpoint", s3.endpoint], environment: s3.environment, name: "second")
        try Daemon.wait(timeout: 180, "the job published by the second worker") {
            (try? database.sql("SELECT state FROM ingestd_jobs WHERE id = '\(id)'")) == "published"
        }
        let output = try database.sql("SELECT output FROM ingestd_jobs WHERE id = '\(id)'")
        #expect(!output.hasSuffix("/\(dead)"), "the dead attempt \(dead) is not the one named: \(output)")
        let live = String(output.split(separator: "/").last!)
        let before = try #require(try S3Check.run(s3, ["list", s3.bucket, "cdn/\(id)/"]) as? [String])
        #expect(before.contains { $0.hasPrefix("cdn/\(id)/\(dead)/") }, "the dead attempt left objects: \(before)")

        // Look-alikes the sweeper must leave: not a job's, and newer than the job's row knows.
        let decoy = Paths.scratch("bucket-decoy.txt")
        try Data("x".utf8).write(to: URL(fileURLWithPath: decoy))
        for key in ["cdn/not-a-job/t1/master.m3u8", "cdn/\(id)/t99/master.m3u8"] { _ = try S3Check.run(s3, ["put", s3.bucket, key, decoy]) }
        let sweep = try Tool.run(Paths.binary, ["sweep", "--database", database.url, "--cdn", "s3://media/cdn", "--grace", "0", "--json",
                                                "--s3-endpoint", s3.endpoint], environment: s3.environment)
        #expect(sweep.status == 0, "\(sweep.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(sweep.stdout.utf8)) as? [String: Any])
        #expect(report["removed"] as? [String] == ["s3://media/cdn/\(id)/\(dead)"], "\(sweep.stdout)")
        let after = try #require(try S3Check.run(s3, ["list", s3.bucket, "cdn/\(id)/"]) as? [String])
        #expect(after == (before.filter { $0.hasPrefix("cdn/\(id)/\(live)/") } + ["cdn/\(id)/t99/master.m3u8"]).sorted(),
                "only the named version (and the look-alike) is left: \(after)")
        #expect(try S3Check.run(s3, ["head", s3.bucket, "cdn/not-a-job/t1/master.m3u8"]) is [String: Any], "not a job's: kept")
        let played = try Tool.run("ffmpeg", ["-v", "error", "-i", "\(s3.endpoint)/media/cdn/\(id)/\(live)/master.m3u8", "-f", "null", "-"])
        #expect(played.status == 0, "\(played.stderr)")
        _ = second
    }

    /// A fleet, its bucket and an HTTP proxy the test controls in front of the bucket.
    struct Bench {
        let database: PostgresServer
        let s3: ObjectStoreServer
        let proxy: HTTPFaultProxy
        let id: String

        init(_ name: String) throws {
            database = try PostgresServer(name: name)
            s3 = try ObjectStoreServer(name: name, publicRead: true)
            proxy = try HTTPFaultProxy(target: s3.port)
            _ = try S3Check.run(s3, ["put", s3.bucket, "uploads/clip.mp4", Paths.sample("hdr_hlg.mp4")])
            let submitted = try Tool.run(Paths.binary, ["submit", "--database", database.url, "--json", "--s3-endpoint", s3.endpoint, "--uploads", "s3://media/uploads",
                                                        "s3://media/uploads/clip.mp4"], environment: s3.environment)
            id = try #require(((try JSONSerialization.jsonObject(with: Data(submitted.stdout.utf8)) as? [[String: String]]) ?? []).first?["id"])
        }

        func worker(_ name: String, viaProxy: Bool, lease: Int = 4) throws -> Worker {
            try Worker(["worker", "--database", database.url, "--cdn", "s3://media/cdn", "--uploads", "s3://media/uploads", "--jobs", "1", "--poll", "0.5",
                        "--lease", "\(lease)", "--s3-endpoint", viaProxy ? "http://127.0.0.1:\(proxy.port)" : s3.endpoint],
                       environment: s3.environment, name: name)
        }

        func waitPublished() throws {
            try Daemon.wait(timeout: 180, "the job published") { (try? database.sql("SELECT state FROM ingestd_jobs WHERE id = '\(id)'")) == "published" }
        }

        var publications: Int { Int((try? database.sql("SELECT count(*) FROM ingestd_job_events WHERE job_id = '\(id)' AND event = 'published'")) ?? "") ?? -1 }
    }

    /// A worker frozen (SIGSTOP) mid-upload past its lease: another worker publishes the job;
    /// the frozen one wakes, finishes its upload and names nothing. Exactly one prefix is
    /// referenced and served; the sweeper takes the other.
    @Test func aFrozenWorkerThatWakesNamesNothing() throws {
        let bench = try Bench("bucket-stop")
        try bench.proxy.delay(1, matching: "PUT /media/cdn/")
        let frozen = try bench.worker("frozen", viaProxy: true)
        try Daemon.wait(timeout: 180, "the first worker's upload under way") {
            bench.proxy.requests.contains { $0.hasPrefix("PUT /media/cdn/\(bench.id)/t") && $0.hasSuffix(" 200") }
        }
        kill(frozen.process.processIdentifier, SIGSTOP)
        let other = try bench.worker("other", viaProxy: false, lease: 30)  // never lost to a late renewal
        try bench.waitPublished()
        let named = try bench.database.sql("SELECT output FROM ingestd_jobs WHERE id = '\(bench.id)'")
        // What it sent before it froze (its version grew in view: it sent segments as they came).
        let sentBefore = bench.proxy.arrived.filter { $0.hasPrefix("PUT /media/cdn/\(bench.id)/") }.count
        kill(frozen.process.processIdentifier, SIGCONT)
        try Daemon.wait(timeout: 120, "the woken worker to give up") { frozen.output.contains("nothing published") }
        let sentAfter = bench.proxy.arrived.filter { $0.hasPrefix("PUT /media/cdn/\(bench.id)/") }.count - sentBefore
        #expect(try bench.database.sql("SELECT output FROM ingestd_jobs WHERE id = '\(bench.id)'") == named, "the pointer did not move")
        #expect(bench.publications == 1)
        let versions = Set(((try S3Check.run(bench.s3, ["list", bench.s3.bucket, "cdn/\(bench.id)/"]) as? [String]) ?? [])
            .map { $0.split(separator: "/")[2] })
        #expect(versions.count == 2, "the frozen attempt's prefix and the published one: \(versions)")
        let ladder = try #require(try S3Check.run(bench.s3, ["list", bench.s3.bucket, "cdn/\(bench.id)/"]) as? [String])
            .filter { $0.hasPrefix(String(named.dropFirst("s3://media/".count)) + "/") }.count
        #expect(sentAfter < ladder, "the woken worker stopped uploading (\(sentAfter) files sent of \(ladder))")
        // A PUT the woken worker sent before it gave up may still be held by the proxy's 1 s delay
        // and land after: the sweep comes once every request the proxy took has been answered
        // (however long a loaded server takes) and it has been quiet for 3 s, or that object would
        // make the swept prefix appear again.
        var seen = -1, quietSince = Date()
        try Daemon.wait(timeout: 60, "the proxy to fall quiet, every request it took answered") {
            let answered = bench.proxy.requests.count, arrived = bench.proxy.arrived.count  // answered first: never more than arrived
            if answered + arrived != seen { (seen, quietSince) = (answered + arrived, Date()) }
            return answered == arrived && Date().timeIntervalSince(quietSince) >= 3
        }
        let sweep = try Tool.run(Paths.binary, ["sweep", "--database", bench.database.url, "--cdn", "s3://media/cdn", "--grace", "0",
                                                "--s3-endpoint", bench.s3.endpoint], environment: bench.s3.environment)
        #expect(sweep.status == 0 && sweep.stdout.contains("1 prefixes"), "\(sweep.stdout) \(sweep.stderr)")
        let left = Set(((try S3Check.run(bench.s3, ["list", bench.s3.bucket, "cdn/\(bench.id)/"]) as? [String]) ?? []).map { $0.split(separator: "/")[2] })
        #expect(left.map { "s3://media/cdn/\(bench.id)/\($0)" } == [named])
        let played = try Tool.run("ffmpeg", ["-v", "error", "-i", "\(bench.s3.endpoint)/media\(named.dropFirst("s3://media".count))/master.m3u8", "-f", "null", "-"])
        #expect(played.status == 0, "\(played.stderr)")
        _ = other
    }

    /// A storm of 503s from the bucket while a worker publishes: every request is retried, the
    /// job publishes on its first attempt, once.
    @Test func aServerErrorStormIsRiddenOut() throws {
        let bench = try Bench("bucket-storm")
        try bench.proxy.fail(12)
        let worker = try bench.worker("storm", viaProxy: true, lease: 20)
        try bench.waitPublished()
        #expect(bench.proxy.requests.filter { $0.hasSuffix("503 injected") }.count == 12)
        #expect(try bench.database.sql("SELECT attempts FROM ingestd_jobs WHERE id = '\(bench.id)'") == "1", "no attempt charged")
        #expect(bench.publications == 1)
        let named = try bench.database.sql("SELECT output FROM ingestd_jobs WHERE id = '\(bench.id)'")
        let played = try Tool.run("ffmpeg", ["-v", "error", "-i", "\(bench.s3.endpoint)/media\(named.dropFirst("s3://media".count))/master.m3u8", "-f", "null", "-"])
        #expect(played.status == 0, "\(played.stderr)")
        _ = worker
    }
}
