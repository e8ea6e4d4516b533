import Foundation
import IngestdTesting
import Testing

/// `ingestd serve` in fleet mode (#31): upload state in PostgreSQL, bytes as S3 multipart parts
/// in a real SeaweedFS bucket, two serve hosts on one queue; curl speaks tus, boto3 and psql
/// check what is where.
@Suite(.serialized, .enabled(if: PostgresServer.binaries != nil && ObjectStoreServer.binary != nil && S3Check.available,
                             "PostgreSQL, SeaweedFS or boto3 is not installed"))
struct FleetUploadTests {
    typealias HTTP = UploadServerTests

    /// A fleet of serve hosts on one database and one bucket, sharing one upload secret.
    struct Fleet {
        let database: PostgresServer
        let s3: ObjectStoreServer
        let base: String
        var hosts: [UploadServerProcess] = []

        init(_ name: String, hosts count: Int, extra: [String] = []) throws {
            database = try PostgresServer(name: name)
            s3 = try ObjectStoreServer(name: name)
            base = Paths.scratch(name)
            for index in 0..<count {
                let arguments = ["--database", database.url, "--uploads", "s3://media/uploads", "--s3-endpoint", s3.endpoint,
                                 "--scratch", "\(base)/scratch-\(index)"] + extra
                hosts.append(try UploadServerProcess(base: "\(base)/host-\(index)", arguments: arguments, fleet: true, environment: s3.environment,
                                                     secretFile: hosts.first?.secretFile))
            }
        }

        /// `length` bytes of `file` from `offset`, as a file of their own.
        func slice(_ file: String, _ offset: Int, _ length: Int) throws -> String {
            let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: file))
            defer { try? handle.close() }
            try handle.seek(toOffset: UInt64(offset))
            let path = "\(base)/slice-\(offset)-\(length)"
            try (handle.readData(ofLength: length)).write(to: URL(fileURLWithPath: path))
            return path
        }

        func sql(_ statement: String) throws -> String { try database.sql(statement) }

        func keys(_ prefix: String) throws -> [String] { try #require(try S3Check.run(s3, ["list", s3.bucket, prefix]) as? [String]) }

        func pending() throws -> [[String]] { try #require(try S3Check.run(s3, ["pending", s3.bucket, "uploads/"]) as? [[String]]) }
    }

    /// 30 MB from host A in a 6 MiB PATCH (a part) and 1 MiB ones (the tail); A is killed (SIGKILL);
    /// host B reports exactly the acknowledged offset and takes the rest, while a second writer on
    /// the restarted A gets 409; the last byte makes one job whose input is the completed object,
    /// byte-identical to the source, with no multipart upload or tail object left; a retried last
    /// PATCH and HEADs after it queue nothing more.
    @Test func anUploadStartedOnOneHostIsFinishedOnAnother() throws {
        let fleet = try Fleet("fleet-upload", hosts: 2)
        let (a, b) = (fleet.hosts[0], fleet.hosts[1])
        let source = "\(fleet.base)/source"
        #expect(try Tool.run("sh", ["-c", "head -c 30000000 /dev/urandom > '\(source)'"]).status == 0)
        let size = 30_000_000, mib = 1 << 20
        let link = try a.link("fleet-clip")
        let created = try HTTP.create(link.upload, length: size, ["Upload-Metadata": "filename \(Data("phone clip.mp4".utf8).base64EncodedString())"])
        let location = try #require(created.headers["location"], "\(created.status) \(created.body)")
        let (onA, onB) = (a.url + location, b.url + location)

        var offset = 0
        for length in [6 * mib, mib, mib] {
            let answer = try HTTP.patch(onA, offset: offset, file: try fleet.slice(source, offset, length))
            offset += length
            #expect(answer.status == 204 && answer.headers["upload-offset"] == "\(offset)", "\(answer)")
        }
        #expect(try fleet.sql("SELECT jsonb_array_length(parts) || ' ' || tail FROM ingestd_uploads WHERE id = 'fleet-clip'") == "1 \(2 * mib)",
                "6 MiB went as a part, 2 MiB wait in the tail")
        let stored = try fleet.keys("uploads/fleet-clip/")
        #expect(stored.count == 1 && stored[0].contains(".tail."), "one tail object: \(stored)")

        a.kill9()
        let head = try HTTP.request("HEAD", onB, HTTP.tus)
        #expect(head.status == 200 && head.headers["upload-offset"] == "\(offset)" && head.headers["upload-length"] == "\(size)", "\(head)")

        // Two writers at once: a slow PATCH on B holds the upload; the same offset on A is refused.
        try a.start()
        let slow = Process()
        slow.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        slow.arguments = ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "PATCH", "--limit-rate", "1M", "-H", "Tus-Resumable: 1.0.0",
                          "-H", "Upload-Offset: \(offset)", "-H", "Content-Type: application/offset+octet-stream",
                          "--data-binary", "@\(try fleet.slice(source, offset, 3 * mib))", onB]
        let slowOutput = Pipe()
        slow.standardOutput = slowOutput
        try slow.run()
        try Daemon.wait(timeout: 10, "B's writer to hold the upload") {
            (try? fleet.sql("SELECT writer IS NOT NULL FROM ingestd_uploads WHERE id = 'fleet-clip'")) == "t"
        }
        let loser = try HTTP.patch(onA, offset: offset, file: try fleet.slice(source, offset, mib))
        #expect(loser.status == 409, "\(loser)")
        slow.waitUntilExit()
        #expect(String(decoding: slowOutput.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self) == "204")
        offset += 3 * mib
        #expect(try HTTP.request("HEAD", onA, HTTP.tus).headers["upload-offset"] == "\(offset)", "the loser wrote nothing")
        #expect(try fleet.sql("SELECT jsonb_array_length(parts) || ' ' || tail FROM ingestd_uploads WHERE id = 'fleet-clip'") == "2 0",
                "tail and body made 5 MiB: the second part")

        // A body that breaks off (curl gives up after 2 s at 512 KiB/s): what arrived is kept, in the tail.
        let broken = try HTTP.patch(onB, offset: offset, file: try fleet.slice(source, offset, 4 * mib), extra: ["--limit-rate", "512K", "--max-time", "2"])
        #expect(broken.status == 0, "cut off before an answer: \(broken.status)")
        try Daemon.wait(timeout: 20, "the broken-off body acknowledged and its writer gone") {
            (try? fleet.sql("SELECT upload_offset > \(offset) AND writer IS NULL FROM ingestd_uploads WHERE id = 'fleet-clip'")) == "t"
        }
        let kept = Int(try #require(try HTTP.request("HEAD", onA, HTTP.tus).headers["upload-offset"])) ?? 0
        #expect(kept > offset && kept < offset + 4 * mib, "part of the body kept: \(kept - offset) bytes")
        offset = kept

        let last = try fleet.slice(source, offset, size - offset)
        let finished = try HTTP.patch(onB, offset: offset, file: last)
        #expect(finished.status == 204 && finished.headers["upload-offset"] == "\(size)", "\(finished)")

        // Exactly one job, whatever is retried.
        #expect(try HTTP.patch(onB, offset: offset, file: last).status == 409, "a retried last PATCH")
        for host in [onA, onB] { #expect(try HTTP.request("HEAD", host, HTTP.tus).headers["upload-offset"] == "\(size)") }
        #expect(try fleet.sql("SELECT count(*) || ' ' || min(input) FROM ingestd_jobs WHERE id = 'fleet-clip'")
                == "1 s3://media/uploads/fleet-clip/phone clip.mp4")
        #expect(try fleet.sql("SELECT count(*) FROM ingestd_job_events WHERE job_id = 'fleet-clip' AND event = 'queued'") == "1")
        let copy = "\(fleet.base)/copy"
        _ = try S3Check.run(fleet.s3, ["get", fleet.s3.bucket, "uploads/fleet-clip/phone clip.mp4", copy])
        #expect(try HTTP.sha256(copy) == (try HTTP.sha256(source)), "the object is the source, byte for byte")
        #expect(try fleet.keys("uploads/") == ["uploads/fleet-clip/phone clip.mp4"], "no tail object left")
        #expect(try fleet.pending().isEmpty, "no multipart upload left")
        let status = try HTTP.request("GET", link.status.replacingOccurrences(of: a.url, with: b.url))
        #expect(status.status == 200 && status.body.contains("\"state\":\"queued\""), "\(status)")

        // A host that died between completing the object and recording anything: the next HEAD
        // finishes the upload again (the multipart upload is gone, the object is whole) and the
        // queue keeps its one job.
        _ = try fleet.sql("UPDATE ingestd_uploads SET completed = false, enqueued = false WHERE id = 'fleet-clip'")
        #expect(try HTTP.request("HEAD", onA, HTTP.tus).status == 200)
        #expect(try fleet.sql("SELECT completed AND enqueued FROM ingestd_uploads WHERE id = 'fleet-clip'") == "t")
        #expect(try fleet.sql("SELECT count(*) FROM ingestd_job_events WHERE job_id = 'fleet-clip' AND event = 'queued'") == "1")

        // The same crash, its job never queued, and no HEAD before the token ran out: the first
        // upkeep of a restarted host queues it (every byte was acknowledged), never discards it.
        _ = try fleet.sql("DELETE FROM ingestd_job_events WHERE job_id = 'fleet-clip'")
        _ = try fleet.sql("DELETE FROM ingestd_jobs WHERE id = 'fleet-clip'")
        _ = try fleet.sql("UPDATE ingestd_uploads SET completed = false, enqueued = false, expires_at = now() - interval '1 minute' WHERE id = 'fleet-clip'")
        b.kill9()
        try b.start()
        try Daemon.wait(timeout: 30, "the expired, complete upload to be queued") {
            (try? fleet.sql("SELECT count(*) FROM ingestd_jobs WHERE id = 'fleet-clip'")) == "1"
        }
        #expect(try fleet.keys("uploads/") == ["uploads/fleet-clip/phone clip.mp4"], "the object kept")
    }

    /// The status API reads the queue: `uploading` with the bytes' share, `queued` once the last
    /// byte landed, `completed` with URLs under --public-url once a bucket worker published it.
    /// Beside it: a terminated upload and an expired one leave no multipart upload, tail or row
    /// (upload sets: FleetUploadTests+Set.swift).
    /// The host serves with a preset of its own (`serve --preset`, as the phone's limits): the job
    /// it queues carries that preset, and the worker (started with the built-in one) publishes
    /// with it.
    @Test func aWorkerPublishesAFleetUploadAndItsStatusSaysSo() throws {
        let preset = Paths.scratch("fleet-publish-preset.json")
        let hash = try PresetFile.write(preset, name: "phone", limits: ["maxBytes": 20_000_000])
        let fleet = try Fleet("fleet-publish", hosts: 1, extra: ["--public-url", "https://cdn.example.com",
                                                                  "--preset", preset])
        let host = fleet.hosts[0]
        let source = Paths.smallSample
        let size = Int(Checks.size(source))
        let link = try host.link("fleet-pub")
        let upload = host.url + (try #require(try HTTP.create(link.upload, length: size).headers["location"]))
        #expect(try HTTP.patch(upload, offset: 0, file: try fleet.slice(source, 0, size / 2)).status == 204)
        let uploading = try HTTP.request("GET", link.status).body
        #expect(uploading.contains("\"state\":\"uploading\"") && uploading.contains("\"progress\":\(size / 2 * 100 / size)"), "\(uploading)")
        #expect(try HTTP.patch(upload, offset: size / 2, file: try fleet.slice(source, size / 2, size - size / 2)).status == 204)
        #expect(try HTTP.request("GET", link.status).body.contains("\"state\":\"queued\""))

        let worker = try BucketFleetTests.Worker(["worker", "--database", fleet.database.url, "--cdn", "s3://media/cdn", "--uploads", "s3://media/uploads",
                                                  "--jobs", "1", "--poll", "0.5", "--lease", "20", "--s3-endpoint", fleet.s3.endpoint],
                                                 environment: fleet.s3.environment, name: "fleet-publish")
        try Daemon.wait(timeout: 240, "the upload published") {
            (try? fleet.sql("SELECT state FROM ingestd_jobs WHERE id = 'fleet-pub'")) == "published"
        }
        #expect(try fleet.sql("SELECT preset::jsonb ->> 'name' FROM ingestd_jobs WHERE id = 'fleet-pub'") == "phone")
        #expect(try fleet.sql("SELECT manifest -> 'preset' ->> 'hash' FROM ingestd_jobs WHERE id = 'fleet-pub'") == hash,
                "published with serve's preset")
        let body = try HTTP.request("GET", link.status).body
        let report = try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any], "\(body)")
        let version = try fleet.sql("SELECT output FROM ingestd_jobs WHERE id = 'fleet-pub'").dropFirst("s3://media/cdn".count)
        #expect(report["state"] as? String == "completed" && report["master_url"] as? String == "https://cdn.example.com\(version)/master.m3u8", "\(report)")
        let poster = try #require(report["poster_url"] as? String, "\(report)")
        let posterKey = "cdn" + poster.dropFirst("https://cdn.example.com".count)
        #expect(try S3Check.run(fleet.s3, ["head", fleet.s3.bucket, posterKey]) is [String: Any], "the poster is there: \(posterKey)")

        // Deleted with erasure: serve's original in the uploads bucket goes with the video (#65),
        // its status says so, and the id is never used again.
        let before = try #require(try S3Check.run(fleet.s3, ["list", fleet.s3.bucket, "uploads/"]) as? [String])
        #expect(before.contains { $0.contains("fleet-pub") }, "\(before)")
        let erased = try Tool.run(Paths.binary, ["delete", "--database", fleet.database.url, "--cdn", "s3://media/cdn", "--s3-endpoint", fleet.s3.endpoint,
                                                 "--reason-code", "erasure", "--reason", "the person asked", "--json", "fleet-pub"],
                                  environment: fleet.s3.environment)
        #expect(erased.status == 0 && erased.stdout.contains("\"deleted\""), "\(erased.stdout) \(erased.stderr)")
        let after = try #require(try S3Check.run(fleet.s3, ["list", fleet.s3.bucket, ""]) as? [String])
        #expect(!after.contains { $0.contains("fleet-pub") }, "no object of the video or its original is left: \(after.filter { $0.contains("fleet-pub") })")
        #expect(try HTTP.request("GET", link.status).body.contains("\"state\":\"deleted\""))
        #expect(try fleet.sql("SELECT count(*) FROM ingestd_job_events WHERE job_id = 'fleet-pub' AND data <> '{}'::jsonb "
                              + "AND event NOT IN ('deleted', 'deletion_completed')") == "0", "erased")
        #expect(try HTTP.create(try host.link("fleet-pub").upload, length: size).status == 410, "a deleted id is never used again")
        // The app's backend deleting it again (#66): the first tombstone, unchanged.
        let signed = try Tool.run(Paths.binary, ["upload-url", "--delete", "fleet-pub", "--server", host.url, "--upload-secret-file", host.secretFile])
        let deleteURL = try #require(signed.stdout.split(separator: "\n").first { $0.hasPrefix("delete: ") }.map { String($0.dropFirst(8)) })
        let again = try HTTP.request("DELETE", deleteURL)
        #expect(again.status == 200 && again.body.contains("already_deleted") && again.body.contains("the person asked"), "\(again)")
        _ = worker

        // Terminated: the multipart upload and tail go; the token stays used.
        let gone = try host.link("fleet-gone")
        let goneURL = host.url + (try #require(try HTTP.create(gone.upload, length: 3_000_000).headers["location"]))
        #expect(try HTTP.patch(goneURL, offset: 0, file: try fleet.slice(source, 0, 100_000)).status == 204)
        #expect(try HTTP.request("DELETE", goneURL, HTTP.tus).status == 204)
        #expect(try HTTP.request("HEAD", goneURL, HTTP.tus).status == 404)
        #expect(try HTTP.create(gone.upload, length: 100).status == 409)
        let leftGone = try fleet.pending()
        #expect(try fleet.keys("uploads/fleet-gone/").isEmpty && leftGone.allSatisfy { !$0[0].hasPrefix("uploads/fleet-gone/") }, "\(leftGone)")

        // Expired (its row aged by hand): the restarted host's first upkeep removes everything of it.
        let late = try host.link("fleet-late")
        let lateURL = host.url + (try #require(try HTTP.create(late.upload, length: 3_000_000).headers["location"]))
        #expect(try HTTP.patch(lateURL, offset: 0, file: try fleet.slice(source, 0, 100_000)).status == 204)
        #expect(try fleet.keys("uploads/fleet-late/").count == 1)
        _ = try fleet.sql("UPDATE ingestd_uploads SET expires_at = now() - interval '1 second' WHERE id = 'fleet-late'")
        host.kill9()
        try host.start()
        // Counted once the upkeep's pass is over, after the row went: wait for the count too.
        try Daemon.wait(timeout: 30, "the expired upload removed and counted") {
            (try? fleet.sql("SELECT count(*) FROM ingestd_uploads WHERE id = 'fleet-late'")) == "0"
                && ((try? HTTP.request("GET", "\(host.url)/metrics").body) ?? "").contains("uploads_expired_total 1")
        }
        let leftLate = try fleet.pending()
        #expect(try fleet.keys("uploads/fleet-late/").isEmpty && leftLate.isEmpty, "\(leftLate)")
        #expect(try HTTP.request("GET", "\(host.url)/metrics").body.contains("uploads_expired_total 1"))
    }
}
