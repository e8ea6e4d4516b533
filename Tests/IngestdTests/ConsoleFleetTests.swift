import Foundation
import IngestdTesting
import Testing

/// `ingestd console --database` (issue #42) on a real PostgreSQL queue with real workers and
/// headless Chromium; and what it refuses, with curl.
@Suite(.serialized, .enabled(if: PostgresServer.binaries != nil, "PostgreSQL is not installed"))
struct ConsoleFleetTests {
    @Test func anOperatorRetriesAFailedJobAndAWorkerPublishesItOnTheOpenPage() throws {
        let server = try PostgresServer(name: "console-fleet")
        let base = Paths.scratch("console-fleet")
        try? FileManager.default.removeItem(atPath: base)
        let cdn = "\(base)/cdn"
        let fleet = FleetTests()
        let (uploads, paths) = try fleet.stage(["landscape_60fps.mp4", "portrait_rotated.mp4"], in: base)
        // Two jobs fail for real: a host whose job timeout nothing can meet.
        do {
            let slow = try FleetTests.Worker(database: server.url, cdn: cdn, uploads: uploads, name: "console-slow",
                                             extra: ["--job-timeout", "0.05", "--max-attempts", "1"])
            let (submitted, _) = try fleet.submit(server.url, paths, uploads: uploads)
            #expect(submitted.status == 0, "\(submitted.stderr)")
            try Daemon.wait(timeout: 60, "both jobs failed") { (try? fleet.counts(server)) == ["failed": 2] }
            _ = slow
        }
        let failed = try server.sql("SELECT id FROM ingestd_jobs ORDER BY id").split(separator: "\n").map(String.init)
        let http = try PostgresServer.freePort()
        let worker = try FleetTests.Worker(database: server.url, cdn: cdn, uploads: uploads, name: "console-steady",
                                           extra: ["--http", "127.0.0.1:\(http)"])
        let console = try ConsoleProcess(["--database", server.url, "--refresh", "1", "--cdn", cdn], directory: base, log: "\(base)/console.log")

        // The list says what `status --database --json` says.
        let listed = try console.json("/console/jobs")["jobs"] as? [[String: Any]] ?? []
        let status = try Tool.run(Paths.binary, ["status", "--database", server.url, "--json"])
        let told = (try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])?["jobs"] as? [[String: Any]] ?? []
        #expect(listed.count == 2 && told.count == 2)
        for row in listed {
            let same = told.first { $0["id"] as? String == row["id"] as? String } ?? [:]
            #expect(row["state"] as? String == same["state"] as? String && row["attempts"] as? Int == same["attempts"] as? Int
                    && row["input"] as? String == same["input"] as? String && row["host"] as? String == same["worker"] as? String,
                    "\(row) vs \(same)")
        }

        let answer = try console.drive(job: failed[0], cross: failed[1], timeout: 120, shots: base)
        #expect(answer["state_before"] as? String == "failed")
        #expect(Set((answer["rows"] as? [[String]] ?? []).map { $0.first ?? "" }) == Set(failed))
        let seen = answer["states_seen"] as? [String] ?? []
        #expect(seen.last?.hasPrefix("published") == true && answer["kept"] as? Int == 42, "published on the open page: \(seen)")
        #expect((answer["overview_text"] as? String)?.contains("ready") == true, "the worker host is listed: \(answer["overview_text"] ?? "")")
        #expect(answer["cross_site_status"] as? Int == 401 && answer["read_post_status"] as? Int == 403 && answer["read_controls"] as? Int == 0)
        #expect((answer["page_errors"] as? [String] ?? []).isEmpty, "\(answer["page_errors"] ?? "")")
        #expect(try fleet.counts(server) == ["published": 1, "failed": 1])
        #expect(try server.sql("SELECT state FROM ingestd_jobs WHERE id = '\(failed[1])'") == "failed")
        let player = answer["player"] as? [String: Any] ?? [:]
        #expect((player["currentTime"] as? Double ?? 0) >= 1 && (player["src"] as? String)?.contains("/console/media/\(failed[0])/") == true,
                "the job's page plays through the console: \(player)")

        // The attempts tables show the store's attempts (its `claimed` events), no more.
        for (id, expected) in [(failed[0], ["1 failed", "1 published"]), (failed[1], ["1 failed"])] {
            let claims = try server.sql("SELECT count(*) FROM ingestd_job_events WHERE job_id = '\(id)' AND event = 'claimed'")
            let rows = try console.attemptRows(id)
            #expect(rows == expected && claims == "\(expected.count)", "\(id): \(rows), \(claims) claims")
        }
        // The charts count what the worker's /metrics counted, and what the store recorded.
        let metrics = try Tool.run("curl", ["-s", "http://127.0.0.1:\(http)/metrics"]).stdout
        #expect(metrics.contains("ingestd_jobs_total{result=\"published\"} 1"), "\(metrics.prefix(600))")
        let hour = try console.json("/console/?window=hour")
        let total = hour["total"] as? [String: Any] ?? [:]
        #expect(total["published"] as? Int == 1 && total["failed"] as? Int == 2 && total["playable"] as? Int == 1, "\(total)")
        let hosts = hour["hosts"] as? [[String: Any]] ?? []
        #expect(hosts.count == 1 && (hosts.first?["total"] as? [String: Any])?["published"] as? Int == 1, "one host here: \(hosts)")
        let reported = try Tool.run(Paths.binary, ["status", "--database", server.url, "--json"])
        let lastHour = (try JSONSerialization.jsonObject(with: Data(reported.stdout.utf8)) as? [String: Any])?["lastHour"] as? [String: Any] ?? [:]
        #expect(lastHour["published"] as? Int == 1 && lastHour["failed"] as? Int == 2 && lastHour["playableP50"] as? Double == total["playableP50"] as? Double,
                "\(lastHour)")
        _ = worker
    }

    @Test func theConsoleAnswersOnlyTokensAndPagesEveryJobOnce() throws {
        let server = try PostgresServer(name: "console-refusals")
        let base = Paths.scratch("console-refusals")
        try? FileManager.default.removeItem(atPath: base)
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)

        // A tokens file others can read is refused (exit 78), naming the file.
        let loose = "\(base)/loose.tokens"
        _ = FileManager.default.createFile(atPath: loose, contents: Data("operate 0123456789abcdef0123\n".utf8), attributes: [.posixPermissions: 0o644])
        let refused = try Tool.run(Paths.binary, ["console", "--database", server.url, "--http", "127.0.0.1:0", "--console-tokens-file", loose])
        #expect(refused.status == 78 && refused.stderr.contains(loose) && refused.stderr.contains("chmod 600"), "\(refused.status) \(refused.stderr)")

        let console = try ConsoleProcess(["--database", server.url, "--refresh", "1"], directory: base, log: "\(base)/console.log")
        // 130 published jobs, ten of them changed at the same microsecond: three pages.
        _ = try server.sql("""
            INSERT INTO ingestd_jobs (id, state, input, preset, attempts, updated_at, finished_at)
            SELECT 'bulk-' || lpad(g::text, 3, '0'), 'published', '/uploads/' || g || '.mp4', 'default', 1,
                   CASE WHEN g <= 10 THEN timestamptz '2026-11-01 12:00:00.123456+00' ELSE now() - g * interval '1 second' END, now()
              FROM generate_series(1, 130) g;
            INSERT INTO ingestd_jobs (id, state, input, preset, attempts, reason, updated_at, finished_at)
            VALUES ('broken-1', 'failed', '/uploads/broken.mp4', 'default', 3, '{"code": "corrupt_input", "message": "x", "attempts": 3}', now(), now())
            """)
        try Daemon.wait(timeout: 30, "the snapshot counts them") {
            ((try? console.json("/console/jobs?state=published"))?["jobs"] as? [Any])?.count == 50
        }
        var ids: [String] = [], path = "/console/jobs?state=published", pages = 0
        while true {
            let page = try console.json(path)
            ids += (page["jobs"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
            pages += 1
            guard let next = page["next"] as? String, pages < 10 else { break }
            path = "/console/jobs?state=published&after=\(next.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? next)"
        }
        let expected = try server.sql("SELECT id FROM ingestd_jobs WHERE state = 'published' ORDER BY updated_at DESC, id DESC")
            .split(separator: "\n").map(String.init)
        #expect(ids == expected && pages == 3, "every job once, in the store's order: \(ids.count) in \(pages) pages")
        let found = try console.json("/console/jobs?q=bulk-12&state=published")["jobs"] as? [[String: Any]] ?? []
        #expect(Set(found.compactMap { $0["id"] as? String }) == Set((120...129).map { "bulk-\($0)" }))

        // Who may do what.
        #expect(try console.request("GET", "/console/jobs", token: nil, headers: ["Accept": "application/json"]).status == 401)
        #expect(try console.request("GET", "/console/jobs", token: nil).body.contains("name=\"token\""), "a browser gets the login form")
        #expect(try console.request("GET", "/console/events", token: "not-a-token-at-all").status == 401)
        #expect(try console.request("POST", "/console/jobs/retry", token: console.readToken, form: "id=broken-1").status == 403)
        #expect(try console.request("POST", "/console/jobs/retry", token: console.operateToken, headers: ["Sec-Fetch-Site": "cross-site"],
                                    form: "id=broken-1").status == 403)
        #expect(try console.request("POST", "/console/jobs/retry", token: console.operateToken, headers: ["Origin": "http://evil.example"],
                                    form: "id=broken-1").status == 403)
        let stale = try console.request("POST", "/console/jobs/retry", token: console.operateToken,
                                        form: "action=all&state=failed&code=corrupt_input&confirm=5")
        #expect(stale.status == 409 && stale.body.contains("1 jobs match now"), "\(stale)")
        #expect(try server.sql("SELECT state FROM ingestd_jobs WHERE id = 'broken-1'") == "failed", "nothing retried yet")
        let retried = try console.request("POST", "/console/jobs/retry", token: console.operateToken,
                                          headers: ["Accept": "application/json", "Sec-Fetch-Site": "same-origin"],
                                          form: "action=all&state=failed&code=corrupt_input&confirm=1")
        #expect(retried.status == 200 && retried.body.contains("\"broken-1\""), "\(retried)")
        let again = try console.request("POST", "/console/jobs/retry", token: console.operateToken,
                                        headers: ["Accept": "application/json"], form: "id=broken-1")
        #expect(again.status == 200 && again.body.contains("\"skipped\" : [\n    \"broken-1\""), "a conflict is a message: \(again.body)")
        #expect(try server.sql("SELECT state || ' ' || attempts FROM ingestd_jobs WHERE id = 'broken-1'") == "queued 0")
        #expect(try server.sql("SELECT count(*) FROM ingestd_job_events WHERE job_id = 'broken-1' AND event = 'retried'") == "1")
        let log = (try? String(contentsOfFile: "\(base)/console.log", encoding: .utf8)) ?? ""
        #expect(log.contains("console: retry") && !log.contains(console.operateToken), "writes logged, tokens never")
    }
}
