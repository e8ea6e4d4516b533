import Foundation
import IngestdTesting
import Testing

/// A video played while it is made, in a fleet (`ingestd worker` on a real PostgreSQL server, a
/// directory CDN): the row says which attempt's video is playable, and an attempt whose worker
/// died after it went playable is withdrawn by whichever host rescues its lease.
@Suite(.serialized, .offTheSharedPool, .enabled(if: PostgresServer.binaries != nil, "PostgreSQL is not installed"))
struct FleetGrowingTests {
    /// A worker goes playable; `status --job` says so with the output while the job runs; then
    /// the worker and its job process are killed (kill -9) on the job's last attempt. A second
    /// host's rescue fails the job and withdraws the early version: the master goes (a player
    /// gets a 404), its files with it, and nothing is left of the video in the CDN.
    @Test func aDeadWorkersShownVideoIsWithdrawnByTheRescue() async throws {
        let server = try PostgresServer(name: "growing")
        let base = Paths.scratch("fleet-growing")
        try? FileManager.default.removeItem(atPath: base)
        let cdn = "\(base)/cdn", uploads = "\(base)/uploads"
        for directory in [cdn, uploads] { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) }
        // One small rung: its gate opens long before the end, however busy the host.
        let (upload, preset) = try await GrowingVideoTests.lightUpload(presetPath: "\(base)/light.json")
        try FileManager.default.copyItem(atPath: upload, toPath: "\(uploads)/clip.mp4")
        let submitted = try Tool.run(Paths.binary, ["submit", "--database", server.url, "--uploads", uploads, "--preset", preset, "--json",
                                                    "\(uploads)/clip.mp4"])
        let id = try #require((try? JSONSerialization.jsonObject(with: Data(submitted.stdout.utf8)) as? [[String: String]])?.first?["id"],
                              "\(submitted.stderr)")
        let common = ["worker", "--database", server.url, "--cdn", cdn, "--uploads", uploads, "--poll", "0.5", "--jobs", "1", "--max-attempts", "1"]
        var first: WorkerProcess? = try WorkerProcess(common + ["--lease", "3"], log: "\(base)/first.log")
        let job = try Daemon.jobProcess(of: first!.pid)
        // The job runs only in 50 ms steps the test gives it until its video shows, then stays
        // frozen: it cannot list the whole video first, and its margin can only shrink. The
        // pointer is written inside the transaction that records it, before its COMMIT: wait for
        // the row's event too.
        try Daemon.step(job, timeout: 240, "the video playable, and recorded so") {
            (try? String(contentsOfFile: "\(cdn)/\(id)/master.m3u8", encoding: .utf8))?.contains("t1/") == true
                && (try? server.sql("SELECT count(*) FROM ingestd_job_events WHERE job_id = '\(id)' AND event = 'playable'")) == "1"
        }
        #expect(!FileManager.default.fileExists(atPath: "\(cdn)/\(id)/manifest.json"), "playable before it is done")
        func status() -> [String: Any] {
            let run = try? Tool.run(Paths.binary, ["status", "--database", server.url, "--job", id, "--json"])
            return (try? JSONSerialization.jsonObject(with: Data((run?.stdout ?? "").utf8)) as? [String: Any]) ?? [:]
        }
        let answer = status()
        #expect(answer["state"] as? String == "running" && answer["playable"] as? Bool == true && answer["output"] as? String == "\(cdn)/\(id)",
                "\(answer)")
        // How far ahead of its earliest viewer it is, once the worker recorded the listing; the
        // frozen job lists nothing more, so it falls with the database's clock.
        var ahead = Double.infinity
        try Daemon.wait(timeout: 60, "status to say how far ahead the video is") {
            ahead = status()["aheadSeconds"] as? Double ?? .infinity
            return ahead.isFinite
        }
        #expect(ahead <= 20, "no more than the whole video: \(ahead)")
        try Daemon.wait(timeout: 60, "the margin of a frozen job to fall") { (status()["aheadSeconds"] as? Double ?? .infinity) < ahead - 1 }
        #expect(try server.sql("SELECT event FROM ingestd_job_events WHERE job_id = '\(id)' AND event = 'playable'") == "playable")

        let worker = try #require(first?.pid)
        for job in Daemon.children(of: worker) { kill(job, SIGKILL) }
        kill(worker, SIGKILL)
        first = nil
        let second = try WorkerProcess(common + ["--lease", "20"], log: "\(base)/second.log")
        try Daemon.wait(timeout: 60, "the rescue to fail the job") { (try? server.sql("SELECT state FROM ingestd_jobs")) == "failed" }
        try Daemon.wait(timeout: 30, "the shown version withdrawn") { !FileManager.default.fileExists(atPath: "\(cdn)/\(id)") }
        let reason = try server.sql("SELECT reason->>'code' FROM ingestd_jobs")
        #expect(reason == "lease_expired", "\(reason)")
        let after = try Tool.run(Paths.binary, ["status", "--database", server.url, "--job", id, "--json"])
        #expect(!after.stdout.contains("\"playable\""), "a failed job is not playable: \(after.stdout)")
        _ = second
    }
}
