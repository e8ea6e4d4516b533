import IngestdTesting
import Foundation
import Testing
import Transcode
@testable import Ingest
import ObjectStorage

/// A file system that fills up at any point of a job, with `watch`'s default flags (no
/// `--min-free`, no `--max-attempts`): a fault of the host, never charged to the upload. Each case
/// is a real tmpfs whose free space is set so the job runs out of room at a chosen point of its
/// output; once space is freed the upload publishes by itself, whole, within 90 s.
@Suite(.serialized, .enabled(if: MountSupport.available, "needs root to mount a small tmpfs"))
struct DiskFullTests {
    static let sample = Paths.sample("landscape_60fps.mp4")

    /// The disk space (4 KiB blocks, as a tmpfs counts them) of the sample's output as the
    /// daemon publishes it.
    static let outputBytes: Int64 = {
        let base = Paths.scratch("disk-full-reference")
        try? FileManager.default.removeItem(atPath: base)
        guard let daemon = try? Daemon(spool: "\(base)/spool", cdn: "\(base)/cdn"),
              (try? Daemon.drop(sample, into: daemon.spool, as: "clip.mp4")) != nil,
              (try? Daemon.wait(timeout: 300, "the reference") { Daemon.entries("\(base)/spool/archive").count == 1 }) != nil,
              let id = Daemon.entries("\(base)/cdn").first else { return 0 }
        let used = (try? Tool.run("du", ["-sB1", "\(base)/cdn/\(id)"]))?.stdout.split(separator: "\t").first
        return used.flatMap { Int64($0) } ?? 0
    }()

    /// Where the disk is full, as a share of the output written before it: nil is below the
    /// default `--min-free` floor before the job starts.
    static let points: [(name: String, share: Double?)] = [
        ("before the job starts", nil), ("at its first write", 0), ("after the first segments", 0.05),
        ("in the MP4", 0.7), ("among its last files (posters, I-frame playlists)", 0.985),
    ]

    @Test(arguments: 0..<points.count) func aDiskFullAtAnyPointChargesNothingAndPublishesOnceFreed(_ point: Int) throws {
        let (name, share) = Self.points[point]
        try #require(Self.outputBytes > 1_000_000, "the reference transcode's output")
        let base = Paths.scratch("disk-full-\(point)")
        try? FileManager.default.removeItem(atPath: base)
        let spool = "\(base)/spool", cdn = "\(base)/cdn"
        try MountSupport.tmpfs(cdn, size: "8m")
        defer { _ = try? Tool.run("umount", ["-l", cdn]) }
        var info = statvfs()
        try #require(statvfs(cdn, &info) == 0)
        let volume = Int64(info.f_blocks) * Int64(info.f_frsize), available = Int64(info.f_bavail) * Int64(info.f_frsize)
        let floor = volume / 100  // --min-free's default: 1 % of the volume (at most 1 GiB)
        // The floor is checked before a claim; the job may then write into it.
        let free = share.map { max(floor + 4096, Int64(Double(Self.outputBytes) * $0)) } ?? floor / 2
        let filler = "\(cdn)/.filler"
        try Data(count: Int(available - free)).write(to: URL(fileURLWithPath: filler))
        let log = "\(base)/daemon.log"
        let daemon = try Daemon(spool: spool, cdn: cdn, log: log)
        try Daemon.drop(Self.sample, into: spool, as: "clip.mp4")
        func said() -> String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }
        if share == nil {
            try Daemon.wait(timeout: 60, "the host to claim nothing") { HostFaultTests().metrics(spool).contains("ingestd_host_ready 0") }
            sleep(2)
            #expect(!Daemon.events(spool).contains { $0["event"] as? String == "attempt" }, "\(name): nothing claimed")
        } else {
            // The attempt's end recorded (`released`, logged after its output was discarded), not
            // only the fault found: what the attempt left is checked once it has cleaned up.
            try Daemon.wait(timeout: 120, "\(name): the attempt to find the disk full") {
                (said().contains("host fault") && said().contains("[Ingest] released")) || !Daemon.entries("\(spool)/archive").isEmpty
                    || !Daemon.entries("\(spool)/failed").isEmpty
            }
            let fault = said().split(separator: "\n").first { $0.contains("host fault") }.map(String.init) ?? said()
            print("disk full \(name): \(fault)")
            #expect(fault.contains("No space left on device"), "\(name): a full disk, said so: \(fault)")
            #expect(Daemon.entries(cdn) == [".filler"], "\(name): nothing half-published, no staging left: \(Daemon.entries(cdn))")
        }
        try FileManager.default.removeItem(atPath: filler)
        try Daemon.wait(timeout: 90, "\(name): the upload to publish once space is freed") { Daemon.entries("\(spool)/archive").count == 1 }
        let id = try #require(Daemon.entries("\(spool)/archive").first)
        let charged = Daemon.events(spool).filter { ["retry", "failed"].contains($0["event"] as? String ?? "") }
        #expect(charged.isEmpty && Daemon.entries("\(spool)/failed").isEmpty, "\(name): no attempt charged: \(charged)")
        #expect(try HostFaultTests().attempts(spool, id) == 0, "\(name): no attempt charged")
        #expect(Daemon.entries(cdn) == [id], "\(name): published once, no staging left: \(Daemon.entries(cdn))")
        func duration(_ path: String) throws -> Double {
            (try Tool.ffprobe(["-show_entries", "format=duration", path])["format"] as? [String: Any])?.double("duration") ?? 0
        }
        let played = try duration(Checks.published("\(cdn)/\(id)", "360p/index.m3u8"))
        #expect(abs(played - (try duration(Self.sample))) < 0.2, "\(name): published whole: \(played) s")
        _ = daemon
    }

    /// The job processes' scratch file system (TMPDIR, not the CDN's) below the floor: the host
    /// claims nothing and says why; freed, the upload publishes, uncharged.
    @Test func aFullScratchDiskClaimsNothingUntilFreed() throws {
        let base = Paths.scratch("scratch-full")
        try? FileManager.default.removeItem(atPath: base)
        let spool = "\(base)/spool", cdn = "\(base)/cdn", scratch = "\(base)/tmp"
        try MountSupport.tmpfs(scratch, size: "16m")
        defer { _ = try? Tool.run("umount", ["-l", scratch]) }
        var info = statvfs()
        try #require(statvfs(scratch, &info) == 0)
        let filler = "\(scratch)/.filler"
        try Data(count: Int(Int64(info.f_bavail) * Int64(info.f_frsize) - 4096)).write(to: URL(fileURLWithPath: filler))
        let daemon = try Daemon(spool: spool, cdn: cdn, environment: ["TMPDIR": scratch])
        try Daemon.drop(Self.sample, into: spool, as: "clip.mp4")
        let metrics = { HostFaultTests().metrics(spool) }
        try Daemon.wait(timeout: 60, "the host to claim nothing") { metrics().contains("ingestd_host_ready 0") }
        #expect(metrics().contains("ingestd_scratch_free_bytes"), "\(metrics())")
        sleep(2)
        #expect(!Daemon.events(spool).contains { $0["event"] as? String == "attempt" }, "nothing claimed")
        try FileManager.default.removeItem(atPath: filler)
        try Daemon.wait(timeout: 90, "the upload to publish once the scratch is freed") { Daemon.entries("\(spool)/archive").count == 1 }
        let id = try #require(Daemon.entries("\(spool)/archive").first)
        #expect(try HostFaultTests().attempts(spool, id) == 0, "no attempt charged")
        _ = daemon
    }
}

/// The rules a full disk goes through, each in one place.
struct NoSpaceRuleTests {
    /// Foundation says ENOSPC in words of its own (CocoaError 640, "There isn't enough space"):
    /// the write error still reads as the file system's, so its code is `no_space`.
    @Test func foundationsOutOfSpaceErrorsAreNoSpace() {
        let cocoa = CocoaError(.fileWriteOutOfSpace, userInfo: [NSUnderlyingErrorKey: NSError(domain: NSPOSIXErrorDomain, code: Int(ENOSPC))])
        for error in [cocoa as any Error, CocoaError(.fileWriteOutOfSpace), POSIXError(.EDQUOT), NSError(domain: NSPOSIXErrorDomain, code: Int(ENOSPC))] {
            #expect(TranscodeError.writeFailed("/cdn/x/poster.jpg", error).code == "no_space", "\(error)")
            #expect(ExitStatus(for: TranscodeError.writeFailed("/cdn/x/poster.jpg", error)) == .noSpace)
        }
        #expect(TranscodeError.writeFailed("/cdn/x/poster.jpg", POSIXError(.EACCES)).code == "output_failed")
        #expect(IngestError.cannotWrite(path: "/cdn/.x.staging", reason: TranscodeError.writeFailure(CocoaError(.fileWriteOutOfSpace))).code == "no_space")
    }

    @Test func minFreeIsASizeAShareOrAuto() {
        #expect(FreeSpaceFloor("auto") == .standard)
        #expect(FreeSpaceFloor.standard.bytes(ofVolume: 64 << 20) == (64 << 20) / 100, "1 % of a small volume")
        #expect(FreeSpaceFloor.standard.bytes(ofVolume: 2 << 40) == 1 << 30, "at most 1 GiB on a big one")
        #expect(FreeSpaceFloor("2G")?.bytes(ofVolume: 1 << 40) == 2 << 30)
        #expect(FreeSpaceFloor("0")?.bytes(ofVolume: 1 << 40) == 0)
        #expect(FreeSpaceFloor("5%")?.bytes(ofVolume: 100 << 20) == 5 << 20)
        for bad in ["", "-1", "101%", "lots", "1X"] { #expect(FreeSpaceFloor(bad) == nil, "\(bad)") }
    }

    /// A bucket with no room is the storage's fault; an object too large for it is the object's.
    @Test func aBucketWithNoRoomIsNoSpace() throws {
        let location = try S3Location(bucket: "media", key: "cdn/x/master.m3u8")
        for (status, code) in [(507, nil), (503, "XMinioStorageFull"), (403, "QuotaExceeded")] as [(Int, String?)] {
            #expect(S3Error(method: "PUT", location: location, status: status, code: code, message: "full").isOutOfSpace, "\(status) \(code ?? "")")
        }
        #expect(!S3Error(method: "PUT", location: location, status: 400, code: "EntityTooLarge", message: "too big").isOutOfSpace)
    }
}
