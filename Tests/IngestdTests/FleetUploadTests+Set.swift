import Foundation
import IngestdTesting
import Testing

extension FleetUploadTests {
    /// `samples/upload/` (upload.json, 3 clips, music.ogg) as a set of 5 tus uploads across two
    /// fleet hosts: each file its own object under `uploads/<id>/`, the last two finished at the
    /// same moment on A and on B make exactly one job whose input is the prefix, which a bucket
    /// worker publishes; a second completion (rows reset, HEADs on both hosts at once) and a
    /// retried last PATCH queue nothing more. A terminated set and an expired one leave nothing.
    @Test func anUploadSetAcrossTwoHostsBecomesOneJob() throws {
        let fleet = try Fleet("fleet-set", hosts: 2, extra: ["--public-url", "https://cdn.example.com"])
        let (a, b) = (fleet.hosts[0], fleet.hosts[1])
        let source = Paths.sample("upload")
        let names = ["upload.json", "clip1.mp4", "clip2.mp4", "clip3.webm", "music.ogg"]
        func named(_ name: String) -> [String: String] { ["Upload-Metadata": "filename \(Data(name.utf8).base64EncodedString())"] }
        let link = try a.link("fleet-set", extra: ["--files", "5", "--max-bytes", "100000"])

        // The single-host rule: a name is required and unique, the lengths within the limit.
        #expect(try HTTP.create(link.upload, length: 10).status == 400, "a file of a set needs its name")
        #expect(try HTTP.create(link.upload, length: 100_001, named("big.mp4")).status == 413)
        var urls: [String] = []
        for (index, name) in names.enumerated() {
            let host = index.isMultiple(of: 2) ? a : b
            let created = try HTTP.create(link.upload.replacingOccurrences(of: a.url, with: host.url), length: Int(Checks.size("\(source)/\(name)")), named(name))
            #expect(created.status == 201, "\(name): \(created.status) \(created.body)")
            urls.append(host.url + (created.headers["location"] ?? ""))
        }
        #expect(try HTTP.create(link.upload, length: 10, named("clip1.mp4")).status == 409, "five files, no sixth")

        // The first three, and half of the sound track (a tail), alternately on A and B.
        for (index, name) in names.prefix(3).enumerated() {
            #expect(try HTTP.patch(urls[index], offset: 0, file: "\(source)/\(name)").status == 204, "\(name)")
        }
        let music = "\(source)/music.ogg", half = Int(Checks.size(music)) / 2
        #expect(try HTTP.patch(urls[4], offset: 0, file: try fleet.slice(music, 0, half)).status == 204)
        #expect(try fleet.sql("SELECT count(*) FROM ingestd_jobs") == "0", "not a job while a file is missing")

        // The last two files at the same moment: clip3 on B, the rest of the sound track on A.
        let rest = try fleet.slice(music, half, Int(Checks.size(music)) - half)
        let answers = try [(urls[3], 0, "\(source)/clip3.webm"), (urls[4], half, rest)].concurrentMap { try HTTP.patch($0.0, offset: $0.1, file: $0.2).status }
        #expect(answers == [204, 204])
        #expect(try fleet.sql("SELECT count(*) || ' ' || min(input) FROM ingestd_jobs") == "1 s3://media/uploads/fleet-set/")
        #expect(try fleet.sql("SELECT count(*) FROM ingestd_job_events WHERE job_id = 'fleet-set' AND event = 'queued'") == "1")
        #expect(try fleet.keys("uploads/") == names.map { "uploads/fleet-set/\($0)" }.sorted(), "one object per file, no tail")
        #expect(try fleet.pending().isEmpty, "no multipart upload left")
        for name in names {
            let copy = "\(fleet.base)/copy-\(name)"
            _ = try S3Check.run(fleet.s3, ["get", fleet.s3.bucket, "uploads/fleet-set/\(name)", copy])
            #expect(try HTTP.sha256(copy) == (try HTTP.sha256("\(source)/\(name)")), "\(name)")
        }

        // A second completion: the rows forget the job; HEADs on both hosts at once finish the set again.
        #expect(try HTTP.patch(urls[3], offset: 0, file: "\(source)/clip3.webm").status == 409, "a retried last PATCH")
        _ = try fleet.sql("UPDATE ingestd_uploads SET enqueued = false WHERE id = 'fleet-set'")
        let heads = try [urls[3], urls[4]].concurrentMap { try HTTP.request("HEAD", $0, HTTP.tus).status }
        #expect(heads == [200, 200])
        #expect(try fleet.sql("SELECT bool_and(enqueued) FROM ingestd_uploads WHERE id = 'fleet-set'") == "t")
        #expect(try fleet.sql("SELECT count(*) FROM ingestd_job_events WHERE job_id = 'fleet-set' AND event = 'queued'") == "1")

        let worker = try BucketFleetTests.Worker(["worker", "--database", fleet.database.url, "--cdn", "s3://media/cdn", "--uploads", "s3://media/uploads",
                                                  "--jobs", "1", "--poll", "0.5", "--lease", "20", "--s3-endpoint", fleet.s3.endpoint],
                                                 environment: fleet.s3.environment, name: "fleet-set")
        try Daemon.wait(timeout: 120, "the upload set published") {
            (try? fleet.sql("SELECT state FROM ingestd_jobs WHERE id = 'fleet-set'")) == "published"
        }
        _ = worker
        #expect(try HTTP.request("GET", link.status.replacingOccurrences(of: a.url, with: b.url)).body.contains("\"state\":\"completed\""))
        let manifest = try fleet.sql("SELECT manifest->'sources' IS NOT NULL AND jsonb_array_length(manifest->'sources') = 3 AND manifest ? 'music' FROM ingestd_jobs WHERE id = 'fleet-set'")
        #expect(manifest == "t", "three clips joined under the song")

        try setEndsLeaveNothing(fleet, named: named)
    }

    /// A terminated set (one file complete, one in its tail) and an expired one lose every
    /// object, tail and multipart upload; neither becomes a job.
    private func setEndsLeaveNothing(_ fleet: Fleet, named: (String) -> [String: String]) throws {
        let (a, b) = (fleet.hosts[0], fleet.hosts[1])
        let clip = Paths.sample("upload/clip1.mp4")
        var open: [String] = []
        for id in ["fleet-set-gone", "fleet-set-late"] {
            let link = try a.link(id, extra: ["--files", "2"])
            let done = a.url + (try #require(try HTTP.create(link.upload, length: 9_511, named("clip1.mp4")).headers["location"]))
            open.append(b.url + (try #require(try HTTP.create(link.upload, length: 9_511, named("clip2.mp4")).headers["location"])))
            #expect(try HTTP.patch(done, offset: 0, file: clip).status == 204)
            #expect(try HTTP.patch(open.last!, offset: 0, file: try fleet.slice(clip, 0, 4_000)).status == 204)
            #expect(try fleet.keys("uploads/\(id)/").count == 2, "an object and a tail")
        }
        #expect(try HTTP.request("DELETE", open[0], HTTP.tus).status == 204)
        #expect(try HTTP.request("HEAD", open[0].replacingOccurrences(of: "/2?", with: "/1?"), HTTP.tus).status == 404, "the whole set ended")
        #expect(try fleet.keys("uploads/fleet-set-gone/").isEmpty)
        #expect(try fleet.sql("SELECT bool_and(terminated) FROM ingestd_uploads WHERE id = 'fleet-set-gone'") == "t")

        _ = try fleet.sql("UPDATE ingestd_uploads SET expires_at = now() - interval '1 second' WHERE id = 'fleet-set-late'")
        a.kill9()
        try a.start()
        try Daemon.wait(timeout: 30, "the expired set removed") {
            (try? fleet.sql("SELECT count(*) FROM ingestd_uploads WHERE id = 'fleet-set-late'")) == "0"
        }
        #expect(try fleet.keys("uploads/fleet-set-late/").isEmpty && fleet.pending().isEmpty)
        #expect(try fleet.sql("SELECT count(*) FROM ingestd_jobs") == "1")
    }
}

extension Array where Element: Sendable {
    /// `transform` on every element at once, each on a thread of its own; results in order.
    func concurrentMap<T: Sendable>(_ transform: @escaping @Sendable (Element) throws -> T) throws -> [T] {
        let results = LockedResults<T>(count: count)
        DispatchQueue.concurrentPerform(iterations: count) { index in results.set(index, Result { try transform(self[index]) }) }
        return try results.values.map { try $0!.get() }
    }
}

private final class LockedResults<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [Result<T, any Error>?]
    init(count: Int) { storage = Array(repeating: nil, count: count) }
    func set(_ index: Int, _ value: Result<T, any Error>) { lock.withLock { storage[index] = value } }
    var values: [Result<T, any Error>?] { lock.withLock { storage } }
}
