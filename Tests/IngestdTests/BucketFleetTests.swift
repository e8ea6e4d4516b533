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
        _ = try S3Check.run(s3, ["put", s3.bucket, "uploads/clip.mp4", Paths.sample("portrait_rotated.mp4")])
        for name in try FileManager.default.contentsOfDirectory(atPath: Paths.sample("upload")) {
            _ = try S3Check.run(s3, ["put", s3.bucket, "uploads/trip/\(name)", Paths.sample("upload/\(name)")])
        }
        let uploads = Paths.scratch("bucket-fleet-uploads")
        try FileManager.default.createDirectory(atPath: uploads, withIntermediateDirectories: true)
        try UploadsRoot(uploads).mark()
        let submitArguments = ["submit", "--database", database.url, "--json", "--s3-endpoint", s3.endpoint]

        // Refused before anything is queued: wrong credentials, a missing object.
        var wrong = s3.environment
        wrong["AWS_SECRET_ACCESS_KEY"] = "wrong"
        let denied = try Tool.run(Paths.binary, submitArguments + ["s3://media/uploads/clip.mp4"], environment: wrong)
        #expect(denied.status == 66 && denied.stdout.contains("storage_refused") && denied.stdout.contains("s3://media/uploads/clip.mp4"),
                "\(denied.status) \(denied.stdout) \(denied.stderr)")
        let missing = try Tool.run(Paths.binary, submitArguments + ["s3://media/uploads/nothing.mp4"], environment: s3.environment)
        #expect(missing.status == 66 && missing.stdout.contains("input_missing"), "\(missing.status) \(missing.stdout)")
        #expect((try? database.sql("SELECT count(*) FROM ingestd_jobs")) ?? "0" == "0", "nothing queued")

        let submitted = try Tool.run(Paths.binary, submitArguments + ["s3://media/uploads/clip.mp4", "s3://media/uploads/trip/"],
                                     environment: s3.environment)
        #expect(submitted.status == 0, "\(submitted.stderr) \(submitted.stdout)")
        let ids = ((try JSONSerialization.jsonObject(with: Data(submitted.stdout.utf8)) as? [[String: String]]) ?? []).compactMap { $0["id"] }
        #expect(ids.count == 2)

        let worker = try Worker(["worker", "--database", database.url, "--cdn", "s3://media/cdn", "--uploads", uploads, "--jobs", "1",
                                 "--poll", "0.5", "--lease", "20", "--s3-endpoint", s3.endpoint], environment: s3.environment, name: "one")
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
        let status = try Tool.run(Paths.binary, ["status", "--database", database.url, "--json"])
        #expect(ids.allSatisfy { status.stdout.contains("s3://media/cdn/\($0)/t") }, "status names each output: \(status.stdout)")
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
        let uploads = Paths.scratch("bucket-kill-uploads")
        try FileManager.default.createDirectory(atPath: uploads, withIntermediateDirectories: true)
        try UploadsRoot(uploads).mark()
        let submitted = try Tool.run(Paths.binary, ["submit", "--database", database.url, "--json", "--s3-endpoint", s3.endpoint,
                                                    "s3://media/uploads/clip.mp4"], environment: s3.environment)
        let id = try #require(((try JSONSerialization.jsonObject(with: Data(submitted.stdout.utf8)) as? [[String: String]]) ?? []).first?["id"])
        try proxy.delay(1.5, matching: "PUT /media/cdn/")  // a slow link to the bucket
        let arguments = ["worker", "--database", database.url, "--cdn", "s3://media/cdn", "--uploads", uploads, "--jobs", "1",
                         "--poll", "0.5", "--lease", "4"]
        var first: Worker? = try Worker(arguments + ["--s3-endpoint", "http://127.0.0.1:\(proxy.port)"], environment: s3.environment, name: "killed")
        try Daemon.wait(timeout: 180, "the first worker's upload under way") {
            proxy.requests.contains { $0.hasPrefix("PUT /media/cdn/\(id)/t") && $0.hasSuffix(" 200") }
        }
        kill(first!.process.processIdentifier, SIGKILL)
        first = nil
        let dead = try #require(proxy.requests.first { $0.hasPrefix("PUT /media/cdn/\(id)/t") }?.split(separator: "/").dropFirst(4).first)
        let second = try Worker(arguments + ["--s3-endpoint", s3.endpoint], environment: s3.environment, name: "second")
        try Daemon.wait(timeout: 180, "the job published by the second worker") {
            (try? database.sql("SELECT state FROM ingestd_jobs WHERE id = '\(id)'")) == "published"
        }
        let output = try database.sql("SELECT output FROM ingestd_jobs WHERE id = '\(id)'")
        #expect(!output.hasSuffix("/\(dead)"), "the dead attempt \(dead) is not the one named: \(output)")
        let live = String(output.split(separator: "/").last!)
        let before = try #require(try S3Check.run(s3, ["list", s3.bucket, "cdn/\(id)/"]) as? [String])
        #expect(before.contains { $0.hasPrefix("cdn/\(id)/\(dead)/") }, "the dead attempt left objects: \(before)")

        let sweep = try Tool.run(Paths.binary, ["sweep", "--database", database.url, "--cdn", "s3://media/cdn", "--grace", "0", "--json",
                                                "--s3-endpoint", s3.endpoint], environment: s3.environment)
        #expect(sweep.status == 0, "\(sweep.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(sweep.stdout.utf8)) as? [String: Any])
        #expect(report["removed"] as? [String] == ["s3://media/cdn/\(id)/\(dead)"], "\(sweep.stdout)")
        let after = try #require(try S3Check.run(s3, ["list", s3.bucket, "cdn/\(id)/"]) as? [String])
        #expect(after == before.filter { $0.hasPrefix("cdn/\(id)/\(live)/") }, "only the named version is left: \(after)")
        let played = try Tool.run("ffmpeg", ["-v", "error", "-i", "\(s3.endpoint)/media/cdn/\(id)/\(live)/master.m3u8", "-f", "null", "-"])
        #expect(played.status == 0, "\(played.stderr)")
        _ = second
    }
}
