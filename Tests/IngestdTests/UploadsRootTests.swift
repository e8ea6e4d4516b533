import Foundation
import IngestdTesting
@testable import Ingest
import Testing
import Transcode

/// The uploads root (#29 items 1 and 9): inputs only from under it, and a host that cannot see
/// it (its mount gone) claims nothing instead of failing the queue's jobs.
@Suite(.serialized) struct UploadsRootTests {
    /// Spellings that leave the root, or pass through a link inside it, are refused; plain
    /// paths below it are not (checked without FFmpeg or a database).
    @Test func inputsMustBeSpeltBelowTheRootThroughRealDirectories() throws {
        let base = Paths.scratch("uploads-root")
        try? FileManager.default.removeItem(atPath: base)
        let root = "\(base)/uploads"
        try FileManager.default.createDirectory(atPath: "\(root)/user/7", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: "\(base)/elsewhere", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: "\(root)/escape", withDestinationPath: "\(base)/elsewhere")
        let uploads = try UploadsRoot(root)
        for inside in ["\(root)/a.mp4", "\(root)/user/7/clip.mp4"] {
            #expect(uploads.refusal(for: .path(inside)) == nil, "\(inside)")
        }
        #expect(uploads.refusal(for: .soleEntry(of: "\(root)/user/7")) == nil)
        for outside in ["/etc/passwd", "\(base)/uploads-other/a.mp4", "\(root)/../elsewhere/a.mp4", "\(root)/./a.mp4",
                        "\(root)//a.mp4", "\(root)/escape/a.mp4", "\(root)/user/../../elsewhere/a.mp4", root, "\(root)/"] {
            #expect(uploads.refusal(for: .path(outside))?.code == "outside_uploads", "\(outside)")
        }
        #expect(uploads.refusal(for: .soleEntry(of: "\(root)/escape"))?.code == "outside_uploads")
        #expect(uploads.problem()?.contains(".ingestd-uploads") == true, "no marker yet: not ready")
        try uploads.mark()
        #expect(uploads.problem() == nil)
    }

    /// A job row naming anything outside the root is rejected with a reason by the worker, and
    /// the file is never opened (it would be published otherwise: it is a valid video).
    @Test(.enabled(if: PostgresServer.binaries != nil, "PostgreSQL is not installed"))
    func aJobRowOutsideTheRootIsRejected() throws {
        let server = try PostgresServer(name: "outside")
        let base = Paths.scratch("outside")
        try? FileManager.default.removeItem(atPath: base)
        let cdn = "\(base)/cdn", uploads = "\(base)/uploads"
        for directory in [cdn, uploads] { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) }
        try FileManager.default.copyItem(atPath: Paths.sample("noaudio_odd.webm"), toPath: "\(uploads)/inside.webm")
        try FileManager.default.copyItem(atPath: Paths.sample("noaudio_odd.webm"), toPath: "\(base)/outside.webm")
        let inside = try DatabaseFaultTests.submit(server.url, "\(uploads)/inside.webm")
        // Rows another producer wrote, pointing out of the root.
        _ = try server.sql("""
            INSERT INTO ingestd_jobs (id, state, input, input_kind, preset)
            SELECT x.id, 'queued', x.input, 'path', preset FROM ingestd_jobs,
                   (VALUES ('dotdot', '\(uploads)/../outside.webm'), ('absolute', '\(base)/outside.webm')) AS x(id, input)
             WHERE ingestd_jobs.id = '\(inside)'
            """)
        let worker = try WorkerProcess(["worker", "--database", server.url, "--cdn", cdn, "--uploads", uploads, "--jobs", "1",
                                        "--poll", "0.5"], log: "\(base)/worker.log")
        try Daemon.wait(timeout: 120, "every job to end") {
            (try? server.sql("SELECT count(*) FROM ingestd_jobs WHERE state IN ('queued', 'running')")) == "0"
        }
        #expect(try server.sql("SELECT state FROM ingestd_jobs WHERE id = '\(inside)'") == "published")
        for id in ["dotdot", "absolute"] {
            #expect(try server.sql("SELECT state || ' ' || (reason->>'code') FROM ingestd_jobs WHERE id = '\(id)'") == "rejected outside_uploads")
            #expect(!FileManager.default.fileExists(atPath: "\(cdn)/\(id)"))
        }
        _ = worker
    }

    /// The uploads mount disappears (a bind mount unmounted: an empty directory is left) with
    /// six jobs queued: the host reports not ready and charges none of them an attempt; once the
    /// mount is back it is ready again by itself and publishes them all.
    @Test(.enabled(if: MountSupport.available && PostgresServer.binaries != nil, "needs root (mount) and PostgreSQL"))
    func aHostThatLosesItsUploadsMountChargesNoJob() throws {
        let server = try PostgresServer(name: "mount")
        let base = Paths.scratch("uploads-mount")
        try? FileManager.default.removeItem(atPath: base)
        let cdn = "\(base)/cdn", store = "\(base)/store", uploads = "\(base)/uploads"
        for directory in [cdn, store, uploads] { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) }
        #expect(try Tool.run("mount", ["--bind", store, uploads]).status == 0)
        defer { _ = try? Tool.run("umount", ["-l", uploads]) }
        let jobs = 6
        for index in 0..<jobs { try FileManager.default.copyItem(atPath: Paths.sample("noaudio_odd.webm"), toPath: "\(uploads)/\(index).webm") }
        try UploadsRoot(uploads).mark()
        let http = try PostgresServer.freePort()
        let worker = try WorkerProcess(["worker", "--database", server.url, "--cdn", cdn, "--uploads", uploads, "--jobs", "1",
                                        "--poll", "0.5", "--http", "127.0.0.1:\(http)"], log: "\(base)/worker.log")
        try Daemon.wait(timeout: 60, "ready") { DatabaseFaultTests.ready(http) == 200 }

        #expect(try Tool.run("umount", [uploads]).status == 0)
        let unmounted = Date()
        try Daemon.wait(timeout: 30, "not ready") { DatabaseFaultTests.ready(http) == 503 }
        let notReady = DatabaseFaultTests.elapsed(since: unmounted)
        let why = try Tool.run("curl", ["-s", "http://127.0.0.1:\(http)/readyz"]).stdout
        #expect(why.contains("uploads root") && why.contains(".ingestd-uploads"), "\(why)")
        // Queued meanwhile by a healthy host (submit sees the files in the store).
        let submitted = try Tool.run(Paths.binary, ["submit", "--database", server.url, "--uploads", store]
                                                    + (0..<jobs).map { "\(store)/\($0).webm" })
        #expect(submitted.status == 0, "\(submitted.stderr)")
        _ = try server.sql("UPDATE ingestd_jobs SET input = replace(input, '\(store)/', '\(uploads)/')")
        sleep(5)
        #expect(try server.sql("SELECT count(*) || ' ' || sum(attempts) FROM ingestd_jobs WHERE state = 'queued'") == "\(jobs) 0",
                "a host without its uploads claims nothing and charges nothing")

        #expect(try Tool.run("mount", ["--bind", store, uploads]).status == 0)
        let remounted = Date()
        try Daemon.wait(timeout: 30, "ready again") { DatabaseFaultTests.ready(http) == 200 }
        let readyAgain = DatabaseFaultTests.elapsed(since: remounted)
        try Daemon.wait(timeout: 300, "every job published") {
            (try? server.sql("SELECT count(*) FROM ingestd_jobs WHERE state = 'published'")) == "\(jobs)"
        }
        #expect(try server.sql("SELECT max(attempts) FROM ingestd_jobs") == "1", "each published at its first attempt")
        print("uploads mount: not ready \(notReady) s after it went, ready \(readyAgain) s after it came back; 0 attempts charged over \(jobs) jobs")
        _ = worker
    }

    /// A missing input is charged to the upload only once a second host confirms it (#29 item 1).
    /// Host A sees its uploads root and marker but not the upload's directory (a worker in a mount
    /// and UTS namespace of its own, an empty file system mounted over `batch/`: a sub-mount gone,
    /// a stale cache): it releases both jobs uncharged. Host B sees the clip and publishes it; the
    /// file no host sees is rejected once B confirms it, naming both hosts. Before: host A
    /// rejected the clip it could not see.
    @Test(.enabled(if: MountSupport.available && PostgresServer.binaries != nil, "needs root (unshare, mount) and PostgreSQL"))
    func aMissingInputIsChargedOnlyOnceASecondHostConfirmsIt() throws {
        let server = try PostgresServer(name: "confirm")
        let base = Paths.scratch("confirm-missing")
        try? FileManager.default.removeItem(atPath: base)
        let cdn = "\(base)/cdn", uploads = "\(base)/uploads"
        for directory in [cdn, "\(uploads)/batch"] { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) }
        try FileManager.default.copyItem(atPath: Paths.sample("noaudio_odd.webm"), toPath: "\(uploads)/batch/clip.webm")
        try FileManager.default.copyItem(atPath: Paths.sample("noaudio_odd.webm"), toPath: "\(uploads)/gone.webm")
        let clip = try DatabaseFaultTests.submit(server.url, "\(uploads)/batch/clip.webm")
        let gone = try Self.submitted(server.url, uploads, "\(uploads)/gone.webm")
        try FileManager.default.removeItem(atPath: "\(uploads)/gone.webm")
        let arguments = ["worker", "--database", server.url, "--cdn", cdn, "--uploads", uploads, "--jobs", "1", "--poll", "0.5"]
        func host(_ name: String, hiding: String? = nil) -> [String] {
            ["/usr/bin/unshare", "--mount", "--uts", "--fork", "sh", "-c",
             "hostname \(name) && \(hiding.map { "mount -t tmpfs tmpfs \($0) && " } ?? "")exec \"$0\" \"$@\""]
        }
        func released(_ id: String) -> Int {
            Int((try? server.sql("SELECT count(*) FROM ingestd_job_events WHERE job_id = '\(id)' AND event = 'released'")) ?? "") ?? 0
        }
        var hostA: WorkerProcess? = try WorkerProcess(arguments, log: "\(base)/a.log", launcher: host("host-a", hiding: "\(uploads)/batch"))
        try Daemon.wait(timeout: 60, "host A to release both jobs") { released(clip) >= 1 && released(gone) >= 1 }
        // unshare --fork does not pass signals on: the worker is its child.
        for worker in Daemon.children(of: hostA!.process.processIdentifier) { kill(worker, SIGTERM) }
        try Daemon.wait(timeout: 30, "host A to stop") { !hostA!.process.isRunning }
        hostA = nil
        #expect(try server.sql("SELECT string_agg(state || ' ' || attempts, ',' ORDER BY id) FROM ingestd_jobs") == "queued 0,queued 0",
                "nothing charged by the host that could not see the uploads")

        let hostB = try WorkerProcess(arguments, log: "\(base)/b.log", launcher: host("host-b"))
        try Daemon.wait(timeout: 120, "both jobs to end") {
            (try? server.sql("SELECT count(*) FROM ingestd_jobs WHERE state IN ('queued', 'running')")) == "0"
        }
        #expect(try server.sql("SELECT state || ' ' || attempts FROM ingestd_jobs WHERE id = '\(clip)'") == "published 1")
        let rejection = try server.sql("SELECT state || ' ' || attempts || ' ' || (reason->>'message') FROM ingestd_jobs WHERE id = '\(gone)'")
        #expect(rejection.hasPrefix("rejected 1 ") && rejection.contains("missing on host-a and host-b"), "\(rejection)")
        _ = hostB
    }

    /// `submit --json` of one file with its own uploads root; its job id.
    static func submitted(_ database: String, _ uploads: String, _ path: String) throws -> String {
        let result = try Tool.run(Paths.binary, ["submit", "--json", "--database", database, "--uploads", uploads, path])
        let jobs = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]]
        return try #require(jobs?.first?["id"] as? String, "submit: \(result.stderr)")
    }
}
