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
        let server = try CDNServer(root: cdn)
        let console = try ConsoleProcess(["--spool", spool, "--refresh", "0.5", "--cdn-url", server.url], directory: base,
                                         log: "\(base)/console.log")

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
        #expect((answer["detail_text"] as? String)?.contains("retried") == true, "the job's history has its retry")
        let player = answer["player"] as? [String: Any] ?? [:]
        #expect((player["currentTime"] as? Double ?? 0) >= 1 && (player["videoHeight"] as? Int ?? 0) > 0,
                "the job's page plays its ladder from the CDN: \(player)")
        #expect(answer["cross_site_status"] as? Int == 401, "a cross-site post carries no cookie (SameSite=Strict)")
        #expect(answer["read_controls"] as? Int == 0 && answer["read_post_status"] as? Int == 403, "\(answer)")
        #expect((answer["page_errors"] as? [String] ?? []).isEmpty, "no script errors, no CSP refusals: \(answer["page_errors"] ?? "")")

        #expect(Daemon.entries("\(spool)/archive") == [job] && Daemon.entries("\(spool)/failed") == [cross])
        let retried = Daemon.events(spool).filter { $0["event"] as? String == "retried" }.compactMap { $0["id"] as? String }
        #expect(retried == [job], "one retry, of the job the operator picked")

        // An attempt that did not publish keeps the job process's last lines with its end event.
        try Daemon.drop(Paths.sample("broken_truncated.mp4"), into: spool, as: "broken.mp4")
        try Daemon.wait(timeout: 60, "the broken upload rejected") { Daemon.entries("\(spool)/rejected").count == 1 }
        let rejected = try #require(Daemon.entries("\(spool)/rejected").first)
        let page = try console.request("GET", "/console/jobs/\(rejected)", token: console.readToken)
        #expect(page.status == 200 && page.body.contains("<pre class=\"log\">") && page.body.contains("transcode started"),
                "the detail shows the log's tail: \(page.body.suffix(1500))")
        _ = daemon
    }
}
