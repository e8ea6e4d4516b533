import Foundation
import IngestdTesting
import Testing

/// `ingestd console` over the spool (issue #42), with a real daemon and headless Chromium: an
/// operator logs in, finds the failed uploads, retries one and watches it publish on the open
/// page; a cross-site page and a read token cannot retry.
@Suite(.offTheSharedPool)
struct ConsoleTests {
    @Test func anOperatorRetriesAFailedUploadAndWatchesItPublishWithoutAReload() throws {
        let base = Paths.scratch("console-spool")
        try? FileManager.default.removeItem(atPath: base)
        let spool = "\(base)/spool", cdn = "\(base)/cdn"
        // Two uploads fail for real: every attempt outlives a job timeout far too short.
        do {
            let slow = try Daemon(spool: spool, cdn: cdn, extra: ["--job-timeout", "0.05", "--max-attempts", "1"])
            try Daemon.drop(Paths.sample("landscape_60fps.mp4"), into: spool, as: "first.mp4")
            try Daemon.drop(Paths.sample("portrait_rotated.mp4"), into: spool, as: "second.mp4")
            try Daemon.wait(timeout: 60, "both uploads failed") { Daemon.entries("\(spool)/failed").count == 2 }
            _ = slow
        }
        let failed = Daemon.entries("\(spool)/failed").sorted()
        let (job, cross) = (failed[0], failed[1])
        let daemon = try Daemon(spool: spool, cdn: cdn, environment: ["INGESTD_LOG_LEVEL": "info"])
        // No --cdn-url: the console serves the CDN itself to logged-in operators.
        let console = try ConsoleProcess(["--spool", spool, "--refresh", "0.5", "--cdn", cdn], directory: base, log: "\(base)/console.log")

        // The list says what `status --json` says, job by job.
        let listed = try console.json("/console/jobs")["jobs"] as? [[String: Any]] ?? []
        #expect(Set(listed.compactMap { $0["id"] as? String }) == Set(failed))
        for row in listed {
            let id = try #require(row["id"] as? String)
            let status = try Tool.run(Paths.binary, ["status", "--spool", spool, "--job", id, "--json"])
            let told = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
            #expect(row["state"] as? String == told["state"] as? String && row["attempts"] as? Int == told["attempts"] as? Int)
            #expect(row["code"] as? String == (told["reason"] as? [String: Any])?["code"] as? String)
        }

        let answer = try console.drive(job: job, cross: cross, timeout: 120, shots: base)
        let login = answer["login"] as? [String: Any] ?? [:]
        #expect(login["form"] as? Bool == true && (login["after"] as? String)?.hasSuffix("/console/jobs") == true, "\(login)")
        #expect(answer["state_before"] as? String == "failed")
        let rows = (answer["rows"] as? [[String]] ?? []).map { $0.first ?? "" }
        #expect(Set(rows) == Set(failed), "the page lists the failed uploads: \(rows)")
        for shot in ["shot_list", "shot_live"] {
            let picture = answer[shot] as? [String: Any] ?? [:]
            #expect((picture["distinct"] as? Int ?? 0) > 20, "\(shot) is not blank: \(picture)")
        }
        #expect((answer["after_retry"] as? String)?.contains("retried=1") == true && answer["notice"] as? String == "Retried 1 job.",
                "\(answer["after_retry"] ?? "") \(answer["notice"] ?? "")")
        let seen = answer["states_seen"] as? [String] ?? []
        #expect(seen.last?.hasPrefix("published") == true && answer["kept"] as? Int == 42,
                "the open page shows it published, without a reload: \(seen), kept \(answer["kept"] ?? "nil")")
        #expect((answer["detail_text"] as? String)?.contains("Retried by an operator (it had failed)") == true, "the job's history has its retry, in words")
        let player = answer["player"] as? [String: Any] ?? [:]
        #expect((player["currentTime"] as? Double ?? 0) >= 1 && (player["videoHeight"] as? Int ?? 0) > 0
                && (player["src"] as? String)?.hasSuffix("/console/media/\(job)/master.m3u8") == true,
                "the job's page plays its ladder through the console: \(player)")
        #expect(answer["cross_site_status"] as? Int == 401, "a cross-site post carries no cookie (SameSite=Strict)")
        #expect(answer["read_controls"] as? Int == 0 && answer["read_post_status"] as? Int == 403, "\(answer)")
        #expect((answer["page_errors"] as? [String] ?? []).isEmpty, "no script errors, no CSP refusals: \(answer["page_errors"] ?? "")")

        #expect(Daemon.entries("\(spool)/archive") == [job] && Daemon.entries("\(spool)/failed") == [cross])
        // The attempts table shows the store's attempts, no more: the failed one, and the one after the retry.
        let attempts = Daemon.events(spool).filter { $0["id"] as? String == job && $0["event"] as? String == "attempt" }.count
        let attemptRows = try console.attemptRows(job)
        #expect(attemptRows == ["1 failed", "1 published"] && attempts == 2, "\(attemptRows)")
        try expectMediaConfined(console, job: job, cdn: cdn)
        let retried = Daemon.events(spool).filter { $0["event"] as? String == "retried" }.compactMap { $0["id"] as? String }
        #expect(retried == [job], "one retry, of the job the operator picked")

        // An attempt that did not publish keeps the job process's last lines with its end event.
        try Daemon.drop(Paths.sample("broken_truncated.mp4"), into: spool, as: "broken.mp4")
        try Daemon.wait(timeout: 60, "the broken upload rejected") { Daemon.entries("\(spool)/rejected").count == 1 }
        let rejected = try #require(Daemon.entries("\(spool)/rejected").first)
        let page = try console.request("GET", "/console/jobs/\(rejected)", token: console.readToken)
        #expect(page.status == 200 && page.body.contains("<pre class=\"log\">") && page.body.contains("transcode started"),
                "the detail shows the log's tail: \(page.body.suffix(1500))")
        #expect(try console.attemptRows(rejected) == ["1 rejected"])
        _ = daemon
    }

    /// The console serves the CDN it was given read-only, to logged-in operators, and nothing
    /// outside it: no `..`, no hidden directory, no link out of the root.
    func expectMediaConfined(_ console: ConsoleProcess, job: String, cdn: String) throws {
        let master = try console.request("GET", "/console/media/\(job)/master.m3u8", token: console.readToken)
        #expect(master.status == 200 && master.body.hasPrefix("#EXTM3U"), "\(master.status)")
        #expect(try console.request("GET", "/console/media/\(job)/master.m3u8", token: nil).status == 401)
        try FileManager.default.createSymbolicLink(atPath: "\(cdn)/\(job)/leak.json", withDestinationPath: "/etc/hostname")
        try FileManager.default.createDirectory(atPath: "\(cdn)/.\(job).deleting-1-2", withIntermediateDirectories: true)
        try Data("#EXTM3U\n".utf8).write(to: URL(fileURLWithPath: "\(cdn)/.\(job).deleting-1-2/master.m3u8"))
        for path in ["../../etc/hostname", "\(job)/../../../etc/hostname", "\(job)/%2e%2e/%2e%2e/etc/hostname", "\(job)/leak.json",
                     ".\(job).deleting-1-2/master.m3u8", "\(job)", "\(job)/no-such.m3u8", "\(job)/manifest.sh"] {
            let refused = try console.request("GET", "/console/media/\(path)", token: console.operateToken)
            #expect(refused.status == 404 && !refused.body.contains(ProcessInfo.processInfo.hostName), "\(path): \(refused)")
        }
        try FileManager.default.removeItem(atPath: "\(cdn)/\(job)/leak.json")
    }

    /// A burst of uploads on a fresh spool: the overview's charts, in Chromium, count what
    /// `/metrics` (the daemon's `metrics.prom`) counted, minute by minute; its time to playable
    /// is the events' own; the JSON and `status --json` say the same; each job's attempts
    /// table has its one attempt.
    @Test func theOverviewChartsABurstAsMetricsCountsIt() throws {
        let base = Paths.scratch("console-burst")
        try? FileManager.default.removeItem(atPath: base)
        let spool = "\(base)/spool", cdn = "\(base)/cdn"
        let daemon = try Daemon(spool: spool, cdn: cdn, extra: ["--jobs", "2"])
        for index in 1...3 { try Daemon.drop(Paths.smallSample, into: spool, as: "burst\(index).mp4") }
        try Daemon.drop(Paths.sample("broken_truncated.mp4"), into: spool, as: "broken.mp4")
        let counted = ["ingestd_jobs_total{result=\"published\"} 3", "ingestd_jobs_total{result=\"rejected\"} 1"]
        try Daemon.wait(timeout: 180, "the burst settled and counted") {
            let metrics = (try? String(contentsOfFile: "\(spool)/metrics.prom", encoding: .utf8)) ?? ""
            return Daemon.settled(spool) && counted.allSatisfy { metrics.contains($0) }
        }
        let console = try ConsoleProcess(["--spool", spool, "--refresh", "0.5", "--cdn", cdn], directory: base, log: "\(base)/console.log")
        let answer = try console.overview(timeout: 60, shot: "\(base)/console-overview.png")
        let charts = answer["charts"] as? [String: [String: Any]] ?? [:]
        func sum(_ series: String) -> Int { charts[series]?["sum"] as? Int ?? -1 }
        #expect((sum("published"), sum("rejected"), sum("failed")) == (3, 1, 0), "the charts count what /metrics counted: \(charts)")
        #expect(charts["playable"]?["lines"] as? [String] == ["p50", "p95"], "\(charts["playable"] ?? [:])")
        #expect((charts["published"]?["titles"] as? [String] ?? []).contains { $0.contains("published") }, "numbers on hover")
        #expect(((answer["shot"] as? [String: Any])?["distinct"] as? Int ?? 0) > 20, "the screenshot is not blank: \(answer["shot"] ?? "")")
        #expect((answer["summary"] as? String)?.contains("3 published") == true, "\(answer["summary"] ?? "")")
        #expect((answer["page_errors"] as? [String] ?? []).isEmpty, "\(answer["page_errors"] ?? "")")

        // The same figures for scripts, and the time to playable the events recorded.
        let json = try console.json("/console/?window=hour")
        let total = json["total"] as? [String: Any] ?? [:]
        let after = Daemon.events(spool).compactMap { $0["event"] as? String == "playable" ? $0["playableAfterSeconds"] as? Double : nil }.sorted()
        #expect(after.count == 3 && total["playable"] as? Int == 3 && total["playableP50"] as? Double == after[1] && total["playableP95"] as? Double == after[2],
                "\(total) vs \(after)")
        let buckets = json["buckets"] as? [[String: Any]] ?? []
        #expect(buckets.count == 60 && buckets.reduce(0) { $0 + ($1["published"] as? Int ?? 0) } == 3 && buckets.last?["queued"] as? Int == 0)
        #expect(buckets.prefix(55).allSatisfy { $0["queued"] as? Int == 0 }, "nothing queued before the burst: \(buckets.map { $0["queued"] ?? "" })")
        let status = try Tool.run(Paths.binary, ["status", "--spool", spool, "--json"])
        let hour = (try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])?["lastHour"] as? [String: Any] ?? [:]
        #expect(hour["published"] as? Int == 3 && hour["rejected"] as? Int == 1 && hour["playableP50"] as? Double == after[1], "\(hour)")
        for id in Daemon.entries("\(spool)/archive") + Daemon.entries("\(spool)/rejected") {
            let rows = try console.attemptRows(id)
            #expect(rows.count == 1 && rows[0].hasPrefix("1 "), "one attempt, no phantom: \(id) \(rows)")
        }
        _ = daemon
    }
}
