import Foundation
import IngestdTesting
import Testing

/// `ingestd sweep` and the multipart uploads the fleet's attempts leave in a bucket CDN (#30): a
/// real PostgreSQL holding the jobs' rows, a real SeaweedFS server, boto3 beginning the uploads
/// (one part each, as a worker killed mid-upload leaves them) and listing what is left.
@Suite(.serialized, .enabled(if: PostgresServer.binaries != nil && ObjectStoreServer.binary != nil && S3Check.available,
                             "PostgreSQL, SeaweedFS or boto3 is not installed"))
struct BucketSweeperTests {
    /// `ingestd sweep --json`; with `now`, its wall clock is stopped there (libfaketime; the
    /// monotonic clock runs): the cutoff is then `now - grace` however long the sweep takes to start.
    static func sweep(_ database: PostgresServer, _ s3: ObjectStoreServer, grace: Double, now: Date? = nil) throws -> [String: Any] {
        var command = [Paths.binary, "sweep", "--database", database.url, "--cdn", "s3://media/cdn", "--grace", "\(grace)",
                       "--json", "--s3-endpoint", s3.endpoint]
        var environment = s3.environment
        if let now {
            let format = DateFormatter()
            format.locale = Locale(identifier: "en_US_POSIX")
            format.timeZone = TimeZone(identifier: "UTC")
            format.dateFormat = "yyyy-MM-dd HH:mm:ss"
            command = ["/usr/bin/faketime", "-f", format.string(from: now)] + command
            environment["TZ"] = "UTC"
            environment["FAKETIME_DONT_FAKE_MONOTONIC"] = "1"
        }
        let result = try Tool.run(command[0], Array(command.dropFirst()), environment: environment)
        guard result.status == 0 else { throw Tool.ProbeFailure(message: "sweep: \(result.status) \(result.stderr)") }
        return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    }

    static func pending(_ s3: ObjectStoreServer) throws -> Set<String> {
        Set(((try S3Check.run(s3, ["pending", s3.bucket]) as? [[String]]) ?? []).map { $0[0] })
    }

    /// Uploads of attempts no row can name any more are aborted once older than the grace, more
    /// than one page of them (1,000) included; a fresh one, the named attempt's, the running
    /// attempt's, one newer than its row and anything not a job's are kept.
    @Test func staleMultipartUploadsOfDeadAttemptsAreAborted() throws {
        let database = try PostgresServer(name: "sweep-uploads")
        let s3 = try ObjectStoreServer(name: "sweep-uploads")
        let migrated = try Tool.run(Paths.binary, ["db", "migrate", "--database", database.url])
        #expect(migrated.status == 0, "\(migrated.stderr)")
        // The rows a crash leaves: job `pub` published by its attempt 2 (attempt 1 was killed
        // mid-upload); job `run` running its attempt 3 (attempt 2 was killed).
        _ = try database.sql("""
            INSERT INTO ingestd_jobs (id, state, input, preset, attempts, token, output, lease_until, worker) VALUES
              ('pub', 'published', 's3://media/uploads/a.mp4', 'default', 2, 2, 's3://media/cdn/pub/t2', NULL, NULL),
              ('run', 'running', 's3://media/uploads/b.mp4', 'default', 3, 3, NULL, now() + interval '1 hour', 'w1')
            """)
        let dead = (0..<1010).map { String(format: "cdn/pub/t1/720p/seg_%04d.m4s", $0) } + ["cdn/pub/t1/video.mp4", "cdn/run/t2/video.mp4"]
        let kept = ["cdn/pub/t2/video.mp4",      // the attempt the row names
                    "cdn/run/t3/video.mp4",      // the attempt running now
                    "cdn/pub/t7/video.mp4",      // newer than the row knows
                    "cdn/nobody/t1/video.mp4",   // not a job's
                    "cdn/pub/video.mp4",         // not an attempt's
                    "uploads/big.mp4"]           // outside the CDN
        _ = try S3Check.run(s3, ["start-upload", s3.bucket] + dead + kept)
        let deadEnded = Date()
        #expect(try Self.pending(s3) == Set(dead + kept))

        // Within the grace, nothing is aborted.
        let patient = try Self.sweep(database, s3, grace: 3600)
        #expect(patient["abortedUploads"] as? Int == 0, "\(patient)")
        #expect(try Self.pending(s3) == Set(dead + kept))

        // One more upload of the dead attempt, begun well after the others: a grace between the
        // two aborts the old ones and keeps it (SeaweedFS gives an upload's start in seconds). The
        // sweep's clock is stopped at `now`, so the cutoff falls exactly 2 s after the old ones began.
        Thread.sleep(until: deadEnded.addingTimeInterval(5))
        let fresh = "cdn/pub/t1/1080p/seg_0000.m4s"
        _ = try S3Check.run(s3, ["start-upload", s3.bucket, fresh])
        let now = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
        let swept = try Self.sweep(database, s3, grace: now.timeIntervalSince(deadEnded.addingTimeInterval(2)), now: now)
        #expect(swept["abortedUploads"] as? Int == dead.count, "\(swept)")
        #expect(try Self.pending(s3) == Set(kept + [fresh]), "every stale upload of a dead attempt is gone, past the first page")

        // With no grace, the fresh one goes too; the rest is never touched.
        let eager = try Self.sweep(database, s3, grace: 0)
        #expect(eager["abortedUploads"] as? Int == 1, "\(eager)")
        #expect(try Self.pending(s3) == Set(kept))
        #expect(eager["removed"] as? [String] == [], "no objects, only uploads: \(eager)")
    }
}
