import Foundation
import IngestdTesting
import Testing

/// `ingestd delete` with a bucket CDN (#65), on a real SeaweedFS and a real PostgreSQL: the
/// spool's published video, and the fleet's job deleted from one host while a worker on another
/// runs it. Nothing of either is left in the bucket; the other video's objects are unchanged.
@Suite(.serialized, .enabled(if: PostgresServer.binaries != nil && ObjectStoreServer.binary != nil && S3Check.available,
                             "PostgreSQL, SeaweedFS or boto3 is not installed"))
struct BucketDeletionTests {
    static let reason = ["--reason-code", "notice", "--reason", "DMCA #4411", "--json"]

    static func keys(_ s3: ObjectStoreServer, _ prefix: String) throws -> [String] {
        try #require(try S3Check.run(s3, ["list", s3.bucket, prefix]) as? [String])
    }

    static func state(_ run: Tool.Result) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8))) as? [String: Any] ?? [:]
    }

    @Test func aBucketVideoIsDeletedFromTheSpoolAndFromTheFleetWhileAnotherHostRunsIt() throws {
        let s3 = try ObjectStoreServer(name: "deletion", publicRead: true)
        let base = Paths.scratch("bucket-deletion")
        try? FileManager.default.removeItem(atPath: base)
        let spool = "\(base)/spool"
        try FileManager.default.createDirectory(atPath: "\(spool)/incoming", withIntermediateDirectories: true)
        var daemon: BucketFleetTests.Worker? = try BucketFleetTests.Worker(
            ["watch", "--spool", spool, "--cdn", "s3://media/cdn", "--jobs", "1", "--settle", "0.5", "--backoff", "0.2", "--s3-endpoint", s3.endpoint],
            environment: s3.environment, name: "deletion-watch")
        try Daemon.drop(Paths.smallSample, into: spool, as: "keep.mp4")
        try Daemon.drop(Paths.smallSample, into: spool, as: "gone.mp4")
        try Daemon.wait(timeout: 180, "both published") { Daemon.entries("\(spool)/archive").count == 2 || daemon?.process.isRunning == false }
        let gone = try #require(Daemon.entries("\(spool)/archive").first { $0.hasPrefix("gone-") }, "\(daemon?.output ?? "")")
        let keep = try #require(Daemon.entries("\(spool)/archive").first { $0.hasPrefix("keep-") })
        let kept = try Self.keys(s3, "cdn/\(keep)/")
        #expect(try DeletionTests.httpStatus("\(s3.endpoint)/media/cdn/\(gone)/t1/master.m3u8") == 200)

        let deleted = try Tool.run(Paths.binary, ["delete", "--spool", spool, "--cdn", "s3://media/cdn", "--s3-endpoint", s3.endpoint] + Self.reason + [gone],
                                   environment: s3.environment)
        #expect(deleted.status == 0 && deleted.stdout.contains("\"deleted\""), "\(deleted.stdout) \(deleted.stderr)")
        #expect(try Self.keys(s3, "cdn/\(gone)/").isEmpty, "no object of the video is left")
        #expect(try Self.keys(s3, "cdn/\(keep)/") == kept, "the other video's objects are unchanged")
        for path in ["t1/master.m3u8", "current.json", "t1/video.mp4"] {
            #expect(try DeletionTests.httpStatus("\(s3.endpoint)/media/cdn/\(gone)/\(path)") == 404, "\(path)")
        }
        let status = try Tool.run(Paths.binary, ["status", "--spool", spool, "--job", gone, "--json"])
        #expect(Self.state(status)["state"] as? String == "deleted", "\(status.stdout)")
        daemon = nil

        // The fleet: a worker (its own host) runs the job; the delete comes from another.
        let database = try PostgresServer(name: "deletion")
        _ = try S3Check.run(s3, ["put", s3.bucket, "uploads/clip.mp4", Paths.smallSample])
        let submitted = try Tool.run(Paths.binary, ["submit", "--database", database.url, "--json", "--s3-endpoint", s3.endpoint,
                                                    "--uploads", "s3://media/uploads", "s3://media/uploads/clip.mp4"], environment: s3.environment)
        let id = try #require(((try? JSONSerialization.jsonObject(with: Data(submitted.stdout.utf8))) as? [[String: String]])?.first?["id"],
                              "\(submitted.stdout) \(submitted.stderr)")
        let worker = try BucketFleetTests.Worker(["worker", "--database", database.url, "--cdn", "s3://media/cdn", "--uploads", "s3://media/uploads",
                                                  "--jobs", "1", "--poll", "0.5", "--lease", "6", "--s3-endpoint", s3.endpoint],
                                                 environment: s3.environment, name: "deletion-fleet")
        try Daemon.wait(timeout: 60, "the worker to claim the job") {
            (try? database.sql("SELECT state FROM ingestd_jobs WHERE id = '\(id)'")) == "running"
        }
        kill(worker.process.processIdentifier, SIGSTOP)  // frozen mid-attempt, its lease held
        let fleetDelete = ["delete", "--database", database.url, "--cdn", "s3://media/cdn", "--s3-endpoint", s3.endpoint, "--wait", "0"] + Self.reason
        let pending = try Tool.run(Paths.binary, fleetDelete + [id], environment: s3.environment)
        #expect(pending.status == 75 && pending.stdout.contains("\"pending\""), "\(pending.stdout) \(pending.stderr)")
        #expect((try? database.sql("SELECT state FROM ingestd_jobs WHERE id = '\(id)'")) == "deleted")
        kill(worker.process.processIdentifier, SIGCONT)
        try Daemon.wait(timeout: 120, "the worker's upkeep to complete the deletion once the fenced lease ended") {
            (try? database.sql("SELECT completed_at IS NOT NULL FROM ingestd_deletions WHERE id = '\(id)'")) == "t"
        }
        let left = try Self.keys(s3, "cdn/\(id)/")
        #expect(left.isEmpty, "nothing of the fenced attempt is left: \(left)")
        #expect((try? database.sql("SELECT count(*) FROM ingestd_job_events WHERE job_id = '\(id)' AND event = 'published'")) == "0", "never published")
        #expect((try? database.sql("SELECT state FROM ingestd_jobs WHERE id = '\(id)'")) == "deleted")
        #expect(try Self.keys(s3, "cdn/\(keep)/") == kept)
        let fleetStatus = try Tool.run(Paths.binary, ["status", "--database", database.url, "--job", id, "--json"])
        let snapshot = Self.state(fleetStatus)
        #expect(snapshot["state"] as? String == "deleted" && (snapshot["reason"] as? [String: Any])?["code"] as? String == "notice", "\(fleetStatus.stdout)")
        let trail = try Tool.run(Paths.binary, ["status", "--database", database.url, "--deleted", "--json"])
        let tombstones = ((try? JSONSerialization.jsonObject(with: Data(trail.stdout.utf8))) as? [String: [[String: Any]]])?["deleted"] ?? []
        #expect(tombstones.compactMap { $0["id"] as? String } == [id]
                && ((tombstones.first?["reason"] as? [String: Any])?["by"] as? String)?.hasPrefix("cli:") == true, "the audit trail: \(trail.stdout)")
        let again = try Tool.run(Paths.binary, fleetDelete + [id, "no-such-job"], environment: s3.environment)
        #expect(again.status == 1 && again.stdout.contains("already_deleted") && again.stdout.contains("\"unknown\""), "\(again.stdout)")
        let retried = try Tool.run(Paths.binary, ["retry", "--database", database.url, "--rejected", id])
        #expect(retried.status == 1, "\(retried.stdout)")
        kill(worker.process.processIdentifier, SIGTERM)
        worker.process.waitUntilExit()
        #expect(worker.process.terminationStatus == 0, "\(worker.output)")
    }
}
