import Foundation
import IngestdTesting
import Testing

/// A video played while it is made, in a bucket (`watch --cdn s3://…`, a real SeaweedFS server):
/// a boto3 reader polling the bucket as fast as it can sees `current.json` name the attempt's
/// version while the job runs, and every playlist version it reads names only objects that are
/// there, whole, never changed afterwards; growing playlists are `no-cache`, media immutable.
@Suite(.offTheSharedPool, .enabled(if: ObjectStoreServer.binary != nil && S3Check.available, "SeaweedFS or boto3 is not installed"))
struct BucketGrowingTests {
    @Test func aReaderOfTheBucketNeverSeesAPlaylistNamingAnObjectThatIsNotWhole() async throws {
        let server = try ObjectStoreServer(name: "growing", publicRead: true)
        let spool = Paths.scratch("bucket-growing-spool")
        try? FileManager.default.removeItem(atPath: spool)
        try FileManager.default.createDirectory(atPath: "\(spool)/incoming", withIntermediateDirectories: true)
        let daemon = try BucketFleetTests.Worker(["watch", "--spool", spool, "--cdn", "s3://media/cdn", "--jobs", "1", "--settle", "0.5",
                                                  "--backoff", "0.2", "--s3-endpoint", server.endpoint],
                                                 environment: server.environment, name: "bucket-growing")
        try Daemon.drop(try await GrowingVideoTests.growingUpload(), into: spool, as: "clip.mp4")
        var id = ""
        try Daemon.wait(timeout: 60, "the upload claimed") {
            id = Daemon.entries("\(spool)/work").first { !$0.hasPrefix(".") } ?? ""  // not a claim still under its hidden name
            return !id.isEmpty
        }
        let read = try #require(try S3Check.run(server, ["read-growing", server.bucket, "cdn/\(id)", "240"]) as? [String: Any])
        #expect((read["problems"] as? [String])?.isEmpty == true, "\(read)")
        #expect(read["version"] as? String == "t1" && read["manifest_at_show"] as? Bool == false, "shown before it was done: \(read)")
        #expect((read["growing_seen"] as? Int ?? 0) >= 2 && (read["objects_checked"] as? Int ?? 0) > 20, "\(read)")
        #expect(read["playlist_cache"] as? [String] == ["no-cache"] && read["media_cache"] as? [String] == ["public, max-age=31536000, immutable"],
                "\(read)")
        try Daemon.wait(timeout: 60, "the upload filed") { Daemon.entries("\(spool)/archive").count == 1 }
        let events = Daemon.events(spool).compactMap { $0.string("event") }
        #expect(events.firstIndex(of: "playable").map { $0 < (events.firstIndex(of: "published") ?? 0) } == true, "\(events)")
        let playable = try #require(Daemon.events(spool).first { $0.string("event") == "playable" })
        #expect(playable.string("output") == "s3://media/cdn/\(id)/t1", "\(playable)")
        let frames = try Checks.frames("\(server.endpoint)/media/cdn/\(id)/t1/360p/index.m3u8")
        #expect(frames.count == 600)
        _ = daemon
    }
}
