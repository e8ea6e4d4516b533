import IngestdTesting
import Foundation
import Testing
import Transcode

/// `ingestd watch` as operators run it: real processes, real files, kill -9 and SIGTERM.
@Suite(.serialized) struct DaemonTests {
    func freshSpool(_ name: String) -> (spool: String, cdn: String) {
        let base = Paths.scratch("daemon-\(name)")
        try? FileManager.default.removeItem(atPath: base)
        return ("\(base)/spool", "\(base)/cdn")
    }

    /// Every upload name ends exactly once in archive/, rejected/ or failed/, and each archived
    /// one is published completely under cdn/<id>/; no staging directory is left.
    func assertExactlyOnce(spool: String, cdn: String, uploads: Int) throws {
        let archived = Daemon.entries("\(spool)/archive")
        let ended = archived + Daemon.entries("\(spool)/rejected") + Daemon.entries("\(spool)/failed")
        #expect(ended.count == uploads, "ended: \(ended)")
        #expect(Daemon.entries("\(spool)/incoming").isEmpty && Daemon.entries("\(spool)/work").isEmpty)
        let published = Daemon.entries(cdn)
        #expect(published.filter { !$0.hasPrefix(".") } == archived, "cdn and archive disagree")
        #expect(!published.contains { $0.hasPrefix(".") }, "staging left in cdn: \(published)")
        for id in archived {
            #expect(FileManager.default.fileExists(atPath: "\(cdn)/\(id)/manifest.json"))
            #expect(FileManager.default.fileExists(atPath: "\(cdn)/\(id)/master.m3u8"))
            let versions = Daemon.entries("\(cdn)/\(id)").filter { $0.hasPrefix("t") && Int($0.dropFirst()) != nil }
            #expect(versions.count <= 1, "one version published, no other left: \(versions)")
            #expect(Daemon.entries("\(spool)/archive/\(id)/upload").count == 1, "original kept in archive/\(id)/upload")
        }
    }

    @Test func publishesGoodUploadsAndRejectsBadOnesWithReasons() throws {
        let (spool, cdn) = freshSpool("mix")
        var preset = Preset.builtIn
        preset.limits.maxBytes = 1_000_000
        preset.limits.maxDurationSeconds = 4
        let presetPath = Paths.scratch("daemon-mix-preset.json")
        try preset.canonicalJSON().write(to: URL(fileURLWithPath: presetPath))
        let daemon = try Daemon(spool: spool, cdn: cdn, extra: ["--preset", presetPath])
        try Daemon.drop(Paths.sample("hdr_hlg.mp4"), into: spool, as: "good1.mp4")
        try Daemon.drop(Paths.sample("noaudio_odd.webm"), into: spool, as: "good2.webm")
        try Daemon.drop(Paths.sample("broken_truncated.mp4"), into: spool, as: "broken.mp4")
        try Daemon.drop(Paths.sample("portrait_rotated.mp4"), into: spool, as: "big.mp4")       // 1.1 MB > 1 MB
        try Daemon.drop(Paths.sample("landscape_60fps.mp4"), into: spool, as: "long.mp4")       // 5 s > 4 s
        // A file copied in place, not renamed: picked up once complete.
        try FileManager.default.copyItem(atPath: Paths.sample("hdr_hlg.mp4"), toPath: "\(spool)/incoming/copied.mp4")
        // Real broken recordings, when ../shared/media is present.
        var expected = ["broken": "corrupt_input", "big": "too_large", "long": "too_long"]
        if let shared = Paths.sharedMedia {
            try Daemon.drop("\(shared)/edge_malformed_free_box_no_moov.mp4", into: spool, as: "edgefree.mp4")
            try Daemon.drop("\(shared)/derived_edge_iphone6_truncated_no_moov.mov", into: spool, as: "edgetrunc.mov")
            expected["edgefree"] = "corrupt_input"
            expected["edgetrunc"] = "corrupt_input"
        }
        let uploads = 3 + expected.count
        let counted = ["ingestd_jobs_total{result=\"published\"} 3", "ingestd_jobs_total{result=\"rejected\"} \(expected.count)"]
        // The worker counts an end once the store has filed it: wait for the counts too.
        try Daemon.wait(timeout: 180, "all uploads to settle and be counted") {
            let metrics = (try? String(contentsOfFile: "\(spool)/metrics.prom", encoding: .utf8)) ?? ""
            return Daemon.settled(spool) && Daemon.entries("\(spool)/archive").count + Daemon.entries("\(spool)/rejected").count == uploads
                && counted.allSatisfy { metrics.contains($0) }
        }
        try assertExactlyOnce(spool: spool, cdn: cdn, uploads: uploads)
        #expect(Daemon.entries("\(spool)/archive").count == 3)
        var codes: [String: String] = [:]
        for id in Daemon.entries("\(spool)/rejected") {
            let data = try Data(contentsOf: URL(fileURLWithPath: "\(spool)/rejected/\(id)/reason.json"))
            let reason = try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
            codes[String(id.prefix { $0 != "-" })] = reason["code"] as? String
            let message = reason["message"] as? String ?? ""
            #expect(message.contains("\(spool)/rejected/\(id)/"), "message names where the original is: \(message)")
        }
        #expect(codes == expected)
        let message = try String(contentsOfFile: "\(spool)/rejected/\(Daemon.entries("\(spool)/rejected").first { $0.hasPrefix("long") }!)/reason.json", encoding: .utf8)
        #expect(message.contains("5.") && message.contains("4 s"), "measured value and limit in the message")
        let events = Daemon.events(spool).map { $0["event"] as? String ?? "" }
        #expect(events.filter { $0 == "published" }.count == 3)
        #expect(events.filter { $0 == "rejected" }.count == expected.count)
        #expect(events.filter { $0 == "received" }.count >= uploads)
        let metrics = try String(contentsOfFile: "\(spool)/metrics.prom", encoding: .utf8)
        #expect(metrics.contains("ingestd_jobs_total{result=\"published\"} 3"))
        #expect(metrics.contains("ingestd_jobs_total{result=\"rejected\"} \(expected.count)"))
        // status agrees.
        let status = try Tool.run(Paths.binary, ["status", "--spool", spool, "--json"])
        let body = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
        #expect((body?["counts"] as? [String: Int])?["archive"] == 3)
        #expect((body?["states"] as? [String: Int]) == ["queued": 0, "running": 0, "published": 3, "rejected": expected.count, "failed": 0, "deleted": 0],
                "the same words as the queue's status")
        #expect((body?["recentFailures"] as? [Any])?.count == expected.count)
        _ = daemon
    }

    @Test func killNineMidJobThenRestartLosesAndDuplicatesNothing() throws {
        let (spool, cdn) = freshSpool("kill9")
        var daemon: Daemon? = try Daemon(spool: spool, cdn: cdn, extra: ["--jobs", "1"])
        for index in 0..<3 { try Daemon.drop(Paths.smallSample, into: spool, as: "clip\(index).mp4") }
        // Killed once one upload is published and filed and another is in flight, none between
        // its publish and its filing (a kill there repeats the `published` line on restart, as
        // docs/WEBHOOKS.md allows): the daemon runs only in the test's steps until then, and is
        // killed in that state.
        let pid = daemon!.pid
        try Daemon.step(pid, timeout: 240, "one upload filed, another in flight, none half filed") {
            let work = Daemon.entries("\(spool)/work")
            return !Daemon.entries("\(spool)/archive").isEmpty
                && work.contains { FileManager.default.fileExists(atPath: "\(spool)/work/\($0)/progress.json") }
                && !work.contains { FileManager.default.fileExists(atPath: "\(cdn)/\($0)/manifest.json") }
        }
        kill(daemon!.pid, SIGKILL)
        daemon = nil
        // Nothing half-published is visible: a video with its manifest is complete (the one in
        // flight may be growing: playable, without a manifest until it is done).
        let visible = Daemon.entries(cdn).filter { FileManager.default.fileExists(atPath: "\(cdn)/\($0)/manifest.json") }
        #expect(!visible.isEmpty)
        for id in visible {
            #expect(FileManager.default.fileExists(atPath: "\(cdn)/\(id)/master.m3u8"))
        }
        daemon = try Daemon(spool: spool, cdn: cdn)
        try Daemon.wait(timeout: 240, "all uploads after restart") {
            Daemon.settled(spool) && Daemon.entries("\(spool)/archive").count == 3
        }
        try assertExactlyOnce(spool: spool, cdn: cdn, uploads: 3)
        let published = Daemon.events(spool).filter { $0["event"] as? String == "published" }.compactMap { $0["id"] as? String }
        #expect(published.count == Set(published).count, "an upload was published twice: \(published)")
    }

    @Test func twoDaemonsOnOneSpoolNeverShareAnUpload() throws {
        let (spool, cdn) = freshSpool("two")
        let first = try Daemon(spool: spool, cdn: cdn)
        let second = try Daemon(spool: spool, cdn: cdn)
        for index in 0..<4 { try Daemon.drop(Paths.sample(index % 2 == 0 ? "hdr_hlg.mp4" : "noaudio_odd.webm"), into: spool, as: "u\(index).mp4") }
        // The event follows the filing: wait for both, not only for the archive.
        try Daemon.wait(timeout: 180, "four uploads") {
            Daemon.settled(spool) && Daemon.entries("\(spool)/archive").count == 4
                && Daemon.events(spool).filter { $0["event"] as? String == "published" }.count >= 4
        }
        try assertExactlyOnce(spool: spool, cdn: cdn, uploads: 4)
        let events = Daemon.events(spool)
        let claimed = events.filter { $0["event"] as? String == "claimed" }.compactMap { $0["name"] as? String }
        #expect(claimed.sorted() == ["u0.mp4", "u1.mp4", "u2.mp4", "u3.mp4"], "each upload claimed once: \(claimed)")
        let published = events.filter { $0["event"] as? String == "published" }.compactMap { $0["id"] as? String }
        #expect(published.count == 4 && Set(published).count == 4)
        _ = (first, second)
    }

    @Test func sigtermLetsTheJobInFlightFinish() throws {
        let (spool, cdn) = freshSpool("term")
        let daemon = try Daemon(spool: spool, cdn: cdn, extra: ["--grace", "120"])
        try Daemon.drop(Paths.smallSample, into: spool, as: "p.mp4")
        // The daemon runs in the test's steps until its job process runs; the job is then held
        // while the signal arrives, so the signal finds it in flight however busy the host is.
        let job = try Daemon.steppedJobProcess(of: daemon.pid)
        kill(job, SIGSTOP)
        // The job runs in its own process group: a signal to the daemon's group (a terminal's
        // Ctrl-C) does not reach it; the daemon decides when it stops.
        #expect(Daemon.processGroup(job) == job && Daemon.processGroup(job) != Daemon.processGroup(daemon.pid))
        kill(daemon.pid, SIGTERM)
        kill(daemon.pid, SIGCONT)
        kill(job, SIGCONT)
        daemon.process.waitUntilExit()
        #expect(daemon.process.terminationStatus == 0)
        try assertExactlyOnce(spool: spool, cdn: cdn, uploads: 1)
        #expect(Daemon.entries("\(spool)/archive").count == 1)
    }

    /// Past the grace period a job is asked to stop, then killed if it does not: here it is
    /// frozen (SIGSTOP), so only SIGKILL ends it. The upload stays queued, whole, and the next
    /// daemon publishes it.
    @Test func sigtermPastTheGraceKillsAStuckJobAndKeepsItsUpload() throws {
        let (spool, cdn) = freshSpool("term-kill")
        var daemon: Daemon? = try Daemon(spool: spool, cdn: cdn, extra: ["--grace", "1"])
        try Daemon.drop(Paths.smallSample, into: spool, as: "stuck.mp4")
        let job = try Daemon.steppedJobProcess(of: daemon!.pid)
        #expect(kill(job, SIGSTOP) == 0)
        let stopping = Date()
        kill(daemon!.pid, SIGTERM)
        kill(daemon!.pid, SIGCONT)
        daemon!.process.waitUntilExit()
        let took = Date().timeIntervalSince(stopping)
        // About 6 s alone (grace, then SIGTERM, then SIGKILL 5 s later); the bound is a hang guard.
        #expect(took >= 1 && took < 60, "grace, then SIGTERM, then SIGKILL 5 s later: \(took) s")
        #expect(kill(job, 0) != 0 && errno == ESRCH, "the frozen job process was killed")
        let id = try #require(Daemon.entries("\(spool)/work").first)
        #expect(Daemon.entries("\(spool)/work/\(id)/upload") == ["stuck.mp4"], "the upload is still queued")
        #expect(Daemon.entries(cdn).isEmpty, "nothing published, no staging left: \(Daemon.entries(cdn))")
        daemon = try Daemon(spool: spool, cdn: cdn)
        try Daemon.wait(timeout: 120, "the upload published after restart") {
            Daemon.settled(spool) && Daemon.entries("\(spool)/archive").count == 1
        }
        try assertExactlyOnce(spool: spool, cdn: cdn, uploads: 1)
    }

    @Test func hungJobsTimeOutAreRetriedThenFail() throws {
        let (spool, cdn) = freshSpool("timeout")
        let daemon = try Daemon(spool: spool, cdn: cdn, extra: ["--job-timeout", "0.5", "--max-attempts", "2"])
        try Daemon.drop(Paths.sample("portrait_rotated.mp4"), into: spool, as: "slow.mp4")
        try Daemon.wait(timeout: 60, "the upload to fail") { Daemon.entries("\(spool)/failed").count == 1 }
        try Daemon.wait(timeout: 10, "spool to settle") { Daemon.settled(spool) }
        let id = try #require(Daemon.entries("\(spool)/failed").first)
        let data = try Data(contentsOf: URL(fileURLWithPath: "\(spool)/failed/\(id)/reason.json"))
        let reason = try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
        #expect(reason["code"] as? String == "timeout")
        #expect(reason["attempts"] as? Int == 2)
        #expect(FileManager.default.fileExists(atPath: "\(spool)/failed/\(id)/upload/slow.mp4"), "original kept")
        #expect(Daemon.entries(cdn).isEmpty, "nothing published for a failed job")
        let events = Daemon.events(spool).map { $0["event"] as? String ?? "" }
        #expect(events.contains("retry") && events.contains("failed"))
        _ = daemon
    }
}
