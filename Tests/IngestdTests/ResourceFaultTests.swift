import IngestdTesting
import Foundation
import Testing
import Transcode

/// Disk full, read-only spool, vanishing output: jobs fail as retryable, nothing half-written
/// is visible, the original is kept, and the daemon keeps running.
@Suite(.serialized, .enabled(if: MountSupport.available, "needs root to mount a small tmpfs"))
struct ResourceFaultTests {
    func mountTmpfs(_ path: String, size: String) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let result = try Tool.run("mount", ["-t", "tmpfs", "-o", "size=\(size)", "tmpfs", path])
        guard result.status == 0 else { throw Tool.ProbeFailure(message: result.stderr) }
    }

    @Test func cdnFillingUpFailsTheJobWithoutPublishingAnything() throws {
        let base = Paths.scratch("fault-full")
        let spool = "\(base)/spool", cdn = "\(base)/cdn"
        try mountTmpfs(cdn, size: "1m")
        defer { _ = try? Tool.run("umount", ["-l", cdn]) }
        let daemon = try Daemon(spool: spool, cdn: cdn, extra: ["--max-attempts", "2"])
        try Daemon.drop(Paths.sample("portrait_rotated.mp4"), into: spool, as: "big.mp4")
        try Daemon.wait(timeout: 120, "the upload to fail") { Daemon.entries("\(spool)/failed").count == 1 }
        let id = try #require(Daemon.entries("\(spool)/failed").first)
        let reason = try String(contentsOfFile: "\(spool)/failed/\(id)/reason.json", encoding: .utf8)
        #expect(reason.contains("\"output_failed\""), "\(reason)")
        #expect(reason.contains("No space left on device"), "\(reason)")
        #expect(FileManager.default.fileExists(atPath: "\(spool)/failed/\(id)/upload/big.mp4"), "original kept")
        #expect(Daemon.entries(cdn).isEmpty, "nothing visible in the CDN: \(Daemon.entries(cdn))")
        #expect(daemon.process.isRunning)
        // The daemon still works for uploads that fit.
        try Daemon.drop(Paths.sample("hdr_hlg.mp4"), into: spool, as: "small.mp4")
        try Daemon.wait(timeout: 60, "the small upload") { Daemon.entries("\(spool)/archive").count == 1 }
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

    @Test func vanishingOutputDirectoryIsRetried() throws {
        let base = Paths.scratch("fault-vanish")
        try? FileManager.default.removeItem(atPath: base)
        let spool = "\(base)/spool", cdn = "\(base)/cdn"
        let daemon = try Daemon(spool: spool, cdn: cdn)
        try Daemon.drop(Paths.sample("portrait_rotated.mp4"), into: spool, as: "p.mp4")
        // Wait until segments are being written (deleting earlier only races the job's mkdir).
        try Daemon.wait(timeout: 60, "the job to write segments into its staging output") {
            Daemon.entries(cdn).contains { $0.contains(".staging-") && FileManager.default.fileExists(atPath: "\(cdn)/\($0)/360p/seg_000.m4s") }
        }
        try FileManager.default.removeItem(atPath: cdn)
        try Daemon.wait(timeout: 120, "the retried job") { Daemon.settled(spool) && Daemon.entries("\(spool)/archive").count == 1 }
        let events = Daemon.events(spool).map { $0["event"] as? String ?? "" }
        #expect(events.contains("retry"))
        let id = try #require(Daemon.entries("\(spool)/archive").first)
        #expect(FileManager.default.fileExists(atPath: "\(cdn)/\(id)/manifest.json"))
        _ = daemon
    }
}

/// Whether this process may mount a tmpfs (root, in a sandbox that allows it).
enum MountSupport {
    static let available: Bool = {
        guard geteuid() == 0 else { return false }
        let probe = Paths.scratch("mount-probe")
        try? FileManager.default.createDirectory(atPath: probe, withIntermediateDirectories: true)
        guard (try? Tool.run("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", probe]))?.status == 0 else { return false }
        _ = try? Tool.run("umount", [probe])
        return true
    }()
}
