import IngestdTesting
import Foundation
import Testing
import Transcode

/// Disk full, read-only spool, vanishing output: faults of the host, never charged to an upload;
/// nothing half-written is visible, the original is kept, and the daemon keeps running.
@Suite(.serialized, .enabled(if: MountSupport.available, "needs root to mount a small tmpfs"))
struct ResourceFaultTests {
    func mountTmpfs(_ path: String, size: String) throws { try MountSupport.tmpfs(path, size: size) }

    /// The CDN's file system fills up mid-job (a real tmpfs): the job goes back to the queue
    /// uncharged, the host claims nothing for a while, and once space is freed the upload
    /// publishes by itself, whole.
    @Test func aFullDiskSendsTheJobBackUnchargedAndItPublishesOnceSpaceIsFreed() throws {
        let base = Paths.scratch("disk-full")
        try? FileManager.default.removeItem(atPath: base)
        let spool = "\(base)/spool", cdn = "\(base)/cdn"
        try mountTmpfs(cdn, size: "12m")
        defer { _ = try? Tool.run("umount", ["-l", cdn]) }
        var info = statvfs()
        #expect(statvfs(cdn, &info) == 0)
        let filler = "\(cdn)/.filler"
        try Data(count: Int(Int64(info.f_bavail) * Int64(info.f_frsize) - 400_000)).write(to: URL(fileURLWithPath: filler))
        let daemon = try Daemon(spool: spool, cdn: cdn, extra: ["--max-attempts", "1", "--min-free", "100K"])
        try Daemon.drop(Paths.smallSample, into: spool, as: "big.mp4")
        // The release is counted once the store has recorded it (its event): wait for the count.
        try Daemon.wait(timeout: 60, "the attempt to fail on the full disk, counted released") {
            (Daemon.events(spool).contains { $0["event"] as? String == "interrupted" }
                && HostFaultTests().metrics(spool).contains("ingestd_jobs_total{result=\"released\"} 1")) || !Daemon.entries("\(spool)/failed").isEmpty
        }
        #expect(Daemon.entries("\(spool)/failed").isEmpty, "not charged: \(Daemon.entries("\(spool)/failed"))")
        #expect(HostFaultTests().metrics(spool).contains("ingestd_host_ready 0") && HostFaultTests().metrics(spool).contains("ingestd_jobs_total{result=\"released\"} 1"))
        try FileManager.default.removeItem(atPath: filler)
        try Daemon.wait(timeout: 90, "the upload to publish once space is freed") { Daemon.entries("\(spool)/archive").count == 1 }
        let id = try #require(Daemon.entries("\(spool)/archive").first)
        #expect(try HostFaultTests().attempts(spool, id) == 0, "no attempt charged")
        #expect(Daemon.entries(cdn) == [id], "published once, no staging left: \(Daemon.entries(cdn))")
        let played = try Tool.ffprobe(["-show_entries", "format=duration", Checks.published("\(cdn)/\(id)", "360p/index.m3u8")])
        let source = try Tool.ffprobe(["-show_entries", "format=duration", Paths.smallSample])
        #expect(abs(((played["format"] as? [String: Any])?.double("duration") ?? 0) - ((source["format"] as? [String: Any])?.double("duration") ?? 0)) < 0.2)
        _ = daemon
    }

    /// `--min-free` is checked before each claim (#29 item 1): below it the host claims nothing
    /// (no attempt starts, nothing is charged), says why in its metrics with the free bytes, and
    /// takes the upload by itself once space is back above the threshold.
    @Test func belowMinFreeNothingIsClaimedUntilSpaceIsBack() throws {
        let base = Paths.scratch("min-free")
        try? FileManager.default.removeItem(atPath: base)
        let spool = "\(base)/spool", cdn = "\(base)/cdn"
        try mountTmpfs(cdn, size: "16m")
        defer { _ = try? Tool.run("umount", ["-l", cdn]) }
        var info = statvfs()
        #expect(statvfs(cdn, &info) == 0)
        let filler = "\(cdn)/.filler"
        try Data(count: Int(Int64(info.f_bavail) * Int64(info.f_frsize) - 2_000_000)).write(to: URL(fileURLWithPath: filler))
        let daemon = try Daemon(spool: spool, cdn: cdn, extra: ["--min-free", "8M"])
        try Daemon.drop(Paths.smallSample, into: spool, as: "waits.mp4")
        let metrics = { HostFaultTests().metrics(spool) }
        try Daemon.wait(timeout: 30, "the host to say it is not ready") { metrics().contains("ingestd_host_ready 0") }
        sleep(3)
        #expect(!Daemon.events(spool).contains { $0["event"] as? String == "attempt" }, "nothing claimed below --min-free")
        let free = metrics().split(separator: "\n").first { $0.hasPrefix("ingestd_cdn_free_bytes ") }.flatMap { Double($0.split(separator: " ").last ?? "") }
        #expect(free.map { $0 > 0 && $0 < 8 * 1_048_576 } == true, "free bytes exported: \(String(describing: free))")
        try FileManager.default.removeItem(atPath: filler)
        try Daemon.wait(timeout: 60, "the upload to publish once space is back") { Daemon.entries("\(spool)/archive").count == 1 }
        let id = try #require(Daemon.entries("\(spool)/archive").first)
        #expect(try HostFaultTests().attempts(spool, id) == 0, "no attempt charged")
        #expect(Daemon.entries(cdn) == [id], "published once: \(Daemon.entries(cdn))")
        #expect(metrics().contains("ingestd_host_ready 1"))
        _ = daemon
    }

    @Test func readOnlySpoolKeepsUploadsUntilItIsWritableAgain() throws {
        let base = Paths.scratch("fault-ro")
        let spool = "\(base)/spool", cdn = "\(base)/cdn"
        try mountTmpfs(spool, size: "16m")
        defer { _ = try? Tool.run("umount", ["-l", spool]) }
        for directory in ["incoming", "work", "archive", "rejected", "failed"] {
            try FileManager.default.createDirectory(atPath: "\(spool)/\(directory)", withIntermediateDirectories: true)
        }
        try Daemon.drop(Paths.sample("hdr_hlg.mp4"), into: spool, as: "waiting.mp4")
        #expect(try Tool.run("mount", ["-o", "remount,ro", spool]).status == 0)
        let daemon = try Daemon(spool: spool, cdn: cdn)
        usleep(3_000_000)
        #expect(daemon.process.isRunning, "the daemon survives a read-only spool")
        #expect(Daemon.entries("\(spool)/incoming") == ["waiting.mp4"], "the upload is untouched")
        #expect(try Tool.run("mount", ["-o", "remount,rw", spool]).status == 0)
        try Daemon.wait(timeout: 60, "the upload once writable") { Daemon.entries("\(spool)/archive").count == 1 }
    }

    /// The CDN root vanishes mid-job (an unmount): the job goes back uncharged, nothing is made in
    /// the root's place, and once the root is back the upload publishes by itself.
    @Test func vanishingOutputDirectoryIsRetriedOnceItIsBack() throws {
        let base = Paths.scratch("fault-vanish")
        try? FileManager.default.removeItem(atPath: base)
        let spool = "\(base)/spool", cdn = "\(base)/cdn"
        let daemon = try Daemon(spool: spool, cdn: cdn)
        try Daemon.drop(Paths.smallSample, into: spool, as: "p.mp4")
        // The job runs in the test's steps until it writes segments (deleting earlier only races
        // its mkdir), and is held there while the root goes: it is surely mid-job.
        let job = try Daemon.jobProcess(of: daemon.pid)
        try Daemon.step(job, timeout: 120, "the job to write segments into its version") {
            Daemon.entries(cdn).contains { FileManager.default.fileExists(atPath: "\(cdn)/\($0)/t1/360p/seg_000.m4s") }
        }
        // One atomic step, as an unmount is: removing the tree in place races the job's writes.
        try FileManager.default.moveItem(atPath: cdn, toPath: "\(base)/cdn.unmounted")
        kill(job, SIGCONT)
        try Daemon.wait(timeout: 60, "the attempt to go back uncharged") {
            Daemon.events(spool).contains { $0["event"] as? String == "interrupted" }
        }
        sleep(2)
        #expect(!FileManager.default.fileExists(atPath: cdn), "the vanished root was not recreated")
        #expect(Daemon.entries("\(spool)/failed").isEmpty)
        try FileManager.default.createDirectory(atPath: cdn, withIntermediateDirectories: false)  // remounted
        try Daemon.wait(timeout: 120, "the retried job") { Daemon.settled(spool) && Daemon.entries("\(spool)/archive").count == 1 }
        let events = Daemon.events(spool).map { $0["event"] as? String ?? "" }
        #expect(!events.contains("retry") && !events.contains("failed"), "no attempt charged: \(events)")
        let id = try #require(Daemon.entries("\(spool)/archive").first)
        #expect(FileManager.default.fileExists(atPath: "\(cdn)/\(id)/manifest.json"))
        _ = daemon
    }
}

/// Whether this process may mount a tmpfs (root, in a sandbox that allows it).
enum MountSupport {
    /// Mounts a fresh tmpfs of `size` (e.g. `16m`) on `path`.
    static func tmpfs(_ path: String, size: String) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let result = try Tool.run("mount", ["-t", "tmpfs", "-o", "size=\(size)", "tmpfs", path])
        guard result.status == 0 else { throw Tool.ProbeFailure(message: result.stderr) }
    }

    static let available: Bool = {
        guard geteuid() == 0 else { return false }
        let probe = Paths.scratch("mount-probe")
        try? FileManager.default.createDirectory(atPath: probe, withIntermediateDirectories: true)
        guard (try? Tool.run("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", probe]))?.status == 0 else { return false }
        _ = try? Tool.run("umount", [probe])
        return true
    }()
}
