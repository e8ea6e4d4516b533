import Foundation
import IngestdTesting
import Testing

/// `ingestd sweep` without a database (#30): a single host's CDN, where each id's `current.json`
/// names its published version. A real SeaweedFS server; boto3 lays the bucket out and lists what
/// is left (S3 cannot backdate an object: `--grace 0` makes everything old, 3600 everything young).
@Suite(.serialized, .enabled(if: ObjectStoreServer.binary != nil && S3Check.available, "SeaweedFS or boto3 is not installed"))
struct BucketPointerSweepTests {
    static let stamped = "v20250101T000000Z-0123abcd"

    /// Puts `text` at each key.
    static func put(_ s3: ObjectStoreServer, _ objects: [String: String]) throws {
        let file = Paths.scratch("pointer-sweep-object")
        for (key, text) in objects {
            try Data(text.utf8).write(to: URL(fileURLWithPath: file))
            _ = try S3Check.run(s3, ["put", s3.bucket, key, file])
        }
    }

    static func pointer(_ version: String, at date: String) -> String {
        #"{"master":"s3://media/cdn/x/\#(version)/master.m3u8","published_at":"\#(date)","version":"\#(version)"}"#
    }

    static func sweep(_ s3: ObjectStoreServer, _ arguments: [String]) throws -> (report: [String: Any], stderr: String) {
        let result = try Tool.run(Paths.binary, ["sweep", "--cdn", "s3://media/cdn", "--json", "--s3-endpoint", s3.endpoint] + arguments,
                                  environment: s3.environment)
        guard result.status == 0 else { throw Tool.ProbeFailure(message: "sweep: \(result.status) \(result.stderr)") }
        return (try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]), result.stderr)
    }

    static func keys(_ s3: ObjectStoreServer) throws -> Set<String> {
        Set(try #require(try S3Check.run(s3, ["list", s3.bucket, ""]) as? [String]))
    }

    static func pending(_ s3: ObjectStoreServer) throws -> Set<String> {
        Set(((try S3Check.run(s3, ["pending", s3.bucket]) as? [[String]]) ?? []).map { $0[0] })
    }

    /// Versions no pointer names go once old (an id without a pointer names none); the named
    /// version, anything not shaped like a version, every version of an id whose pointer cannot
    /// be parsed, and the version a pointer left within the grace stay. Likewise for multipart
    /// uploads. A young bucket loses nothing; a dry run lists the same and deletes nothing.
    @Test func versionsNoPointerNamesAreSweptAfterTheGrace() throws {
        let s3 = try ObjectStoreServer(name: "pointer-sweep")
        let gone = ["cdn/A/t1/video.mp4",                          // an attempt whose pointer write lost
                    "cdn/A/\(Self.stamped)/master.m3u8",           // the version reprocess replaced
                    "cdn/A/\(Self.stamped)/720p/seg_0000.m4s",
                    "cdn/B/t1/video.mp4",                          // attempts that never got a pointer
                    "cdn/B/v20250102T000000Z-89abcdef/master.m3u8"]
        let kept = ["cdn/A/current.json": Self.pointer("t2", at: "2025-01-01T00:00:00Z"),
                    "cdn/A/t2/master.m3u8": "named",
                    "cdn/A/notaversion/x": "not a version",
                    "cdn/A/t01/x": "", "cdn/A/t+1/x": "", "cdn/A/t1x/x": "", "cdn/A/v20250101T000000Z-0123ABCD/x": "",
                    "cdn/stray.txt": "directly under the CDN",
                    "cdn/C/current.json": "{not json",
                    "cdn/C/t1/video.mp4": "",
                    // Switched away from t1 after the cutoff (within the grace): a player may hold t1.
                    "cdn/D/current.json": Self.pointer("t2", at: "2100-01-01T00:00:00Z"),
                    "cdn/D/t1/video.mp4": "", "cdn/D/t2/video.mp4": "",
                    "uploads/clip.mp4": "outside the CDN"]
        try Self.put(s3, kept.merging(gone.map { ($0, "garbage") }) { $1 })
        let deadUploads = ["cdn/A/t1/1080p/seg_0000.m4s", "cdn/B/t3/video.mp4"]
        let liveUploads = ["cdn/A/t2/1080p/seg_0000.m4s", "cdn/C/t1/1080p/seg_0000.m4s", "cdn/A/notaversion/y"]
        _ = try S3Check.run(s3, ["start-upload", s3.bucket] + deadUploads + liveUploads)
        let everything = Set(kept.keys).union(gone)
        let removed = ["s3://media/cdn/A/t1", "s3://media/cdn/A/\(Self.stamped)", "s3://media/cdn/B/t1", "s3://media/cdn/B/v20250102T000000Z-89abcdef"]

        let young = try Self.sweep(s3, ["--grace", "3600"])
        #expect(young.report["removed"] as? [String] == [], "\(young.report)")
        #expect(young.report["kept"] as? Int == 8 && young.report["abortedUploads"] as? Int == 0, "\(young.report)")
        #expect(try Self.keys(s3) == everything)

        let dry = try Self.sweep(s3, ["--grace", "0", "--dry-run"])
        #expect(dry.report["removed"] as? [String] == removed, "\(dry.report)")
        #expect(dry.report["removedObjects"] as? Int == gone.count && dry.report["abortedUploads"] as? Int == 2, "\(dry.report)")
        #expect(try Self.keys(s3) == everything)
        #expect(try Self.pending(s3) == Set(deadUploads + liveUploads))

        let old = try Self.sweep(s3, ["--grace", "0"])
        #expect(old.report["removed"] as? [String] == removed, "\(old.report)")
        #expect(old.report["removedObjects"] as? Int == gone.count, "\(old.report)")
        #expect(old.report["kept"] as? Int == 4 && old.report["abortedUploads"] as? Int == 2, "\(old.report)")
        #expect(old.stderr.contains("s3://media/cdn/C/current.json"), "the unreadable pointer is named: \(old.stderr)")
        #expect(try Self.keys(s3) == Set(kept.keys))
        #expect(try Self.pending(s3) == Set(liveUploads))
    }

    /// A fleet's CDN (its job rows are the pointers, no `current.json` anywhere) swept without
    /// its database is refused: nothing there would stay.
    @Test func aCDNWithoutAnyPointerIsRefused() throws {
        let s3 = try ObjectStoreServer(name: "pointer-sweep-fleet")
        try Self.put(s3, ["fleet/j1/t1/master.m3u8": "published by a worker", "fleet/j2/t3/master.m3u8": "published by a worker"])
        let result = try Tool.run(Paths.binary, ["sweep", "--cdn", "s3://media/fleet", "--grace", "0", "--json", "--s3-endpoint", s3.endpoint],
                                  environment: s3.environment)
        #expect(result.status == 64, "\(result.stdout) \(result.stderr)")
        #expect(result.stdout.contains("no_pointers") && result.stdout.contains("--database"), "\(result.stdout)")
        #expect(try Self.keys(s3) == ["fleet/j1/t1/master.m3u8", "fleet/j2/t3/master.m3u8"])
    }
}
