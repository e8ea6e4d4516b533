import Foundation
@testable import Ingest
import IngestdTesting
import Testing

/// The deletion's three doors on one spool (#66): the app's backend (`DELETE` on the status URL
/// of `ingestd serve`, with a token signed for that video and for deletion), the console (an
/// `operate` token) and the command line. Each records; the daemon that owns the spool completes;
/// `status --deleted` is the audit trail, naming who asked.
@Suite(.offTheSharedPool, .enabled(if: UploadServerProcess.tuspyAvailable, "tuspy is not installed (make test-deps-python)"))
struct DeletionDoorsTests {
    static func curl(_ method: String, _ url: String, body: String? = nil) throws -> (status: Int, body: String) {
        var arguments = ["-s", "-X", method, "-w", "\n%{http_code}"]
        if let body { arguments += ["-H", "Content-Type: application/json", "--data-raw", body] }
        let result = try Tool.run("curl", arguments + [url])
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        return (Int(lines.last ?? "") ?? 0, lines.dropLast().joined(separator: "\n"))
    }

    static func deleteURL(_ server: UploadServerProcess, _ id: String, expires: String = "10m") throws -> String {
        let signed = try Tool.run(Paths.binary, ["upload-url", "--delete", id, "--server", server.url, "--upload-secret-file", server.secretFile,
                                                 "--expires", expires, "--json"])
        let link = try #require(try JSONSerialization.jsonObject(with: Data(signed.stdout.utf8)) as? [String: String], "\(signed.stderr)")
        return try #require(link["delete_url"])
    }

    @Test func theAppTheConsoleAndTheCommandLineEachDeleteAndTheTrailNamesThem() throws {
        let base = Paths.scratch("deletion-doors")
        let server = try UploadServerProcess(base: base)
        let (spool, cdn) = (server.spool, server.cdn)
        let daemon = try Daemon(spool: spool, cdn: cdn, extra: ["--jobs", "1"], log: "\(base)/watch.log")
        let console = try ConsoleProcess(["--spool", spool, "--refresh", "0.5"], directory: base, log: "\(base)/console.log")

        // A phone's upload through serve (tuspy), and two dropped in the spool.
        let link = try server.link("app-clip")
        let phone = try Tool.run("python3", [UploadServerProcess.client, "upload", link.upload, Paths.smallSample, "--chunk", "262144"])
        #expect(phone.status == 0, "\(phone.stderr)")
        try Daemon.drop(Paths.smallSample, into: spool, as: "moderated.mp4")
        try Daemon.drop(Paths.smallSample, into: spool, as: "shell.mp4")
        try Daemon.drop(Paths.smallSample, into: spool, as: "browser.mp4")
        try Daemon.wait(timeout: 180, "four published") { Daemon.entries("\(spool)/archive").count == 4 }
        let moderated = try #require(Daemon.entries("\(spool)/archive").first { $0.hasPrefix("moderated-") })
        let shell = try #require(Daemon.entries("\(spool)/archive").first { $0.hasPrefix("shell-") })
        let browser = try #require(Daemon.entries("\(spool)/archive").first { $0.hasPrefix("browser-") })

        // The app's backend: every bad token refused with its reason, nothing recorded.
        let url = try Self.deleteURL(server, "app-clip")
        let bare = String(url.prefix { $0 != "?" })
        var flipped = Array(url)
        flipped[flipped.count - 10] = flipped[flipped.count - 10] == "A" ? "B" : "A"  // inside the MAC, not its padding bits
        let forged = String(flipped)
        let other = try Self.deleteURL(server, "someone-else")
        let expired = try Self.deleteURL(server, "app-clip", expires: "1s")
        let statusToken = String(link.status.split(separator: "?").last ?? "")
        sleep(2)
        let refusals: [(String, Int, String)] = [
            (bare, 401, "token"), (forged, 401, "signature"), (expired, 401, "expired"),
            (bare + "?" + String(other.split(separator: "?").last ?? ""), 403, "another upload"),
            (bare + "?" + statusToken, 403, "not for this kind of request"),
        ]
        for (target, status, says) in refusals {
            let answer = try Self.curl("DELETE", target)
            #expect(answer.status == status && answer.body.contains(says), "\(status) \(says): \(answer)")
        }
        let unknown = try Self.curl("DELETE", try Self.deleteURL(server, "never-uploaded"))
        #expect(unknown.status == 404, "\(unknown)")
        #expect(!FileManager.default.fileExists(atPath: "\(spool)/deleted/app-clip.json") && Daemon.entries("\(spool)/archive").count == 4)

        let api = try Self.curl("DELETE", url, body: #"{"code": "owner", "reason": "the user tapped delete"}"#)
        #expect(api.status == 202 && api.body.contains("\"by\" : \"api\""), "\(api)")

        // The console: a read token and a cross-site post are refused; an operate token records.
        let form = "id=\(moderated)&code=moderation&reason=hate+speech+report+77"
        #expect(try console.request("POST", "/console/jobs/delete", token: console.readToken, form: form).status == 403)
        #expect(try console.request("POST", "/console/jobs/delete", token: console.operateToken, headers: ["Sec-Fetch-Site": "cross-site"],
                                    form: form).status == 403)
        let page = try console.request("GET", "/console/jobs/\(moderated)", token: console.operateToken)
        #expect(page.body.contains("action=\"/console/jobs/delete\""), "the job's page offers deletion to an operator")
        let operated = try console.request("POST", "/console/jobs/delete", token: console.operateToken, headers: ["Accept": "application/json"],
                                           form: form)
        #expect(operated.status == 202 && operated.body.contains("console:"), "\(operated)")

        // The command line.
        let cli = try Tool.run(Paths.binary, ["delete", "--spool", spool, "--cdn", cdn, "--reason-code", "notice", "--reason", "DMCA 4411", shell])
        #expect(cli.status == 0, "\(cli.stdout) \(cli.stderr)")

        // The daemon completes what the app and the console recorded.
        try Daemon.wait(timeout: 90, "every deletion completed") {
            ["app-clip", moderated, shell].allSatisfy { JSONFile.read(Tombstone.self, from: "\(spool)/deleted/\($0).json")?.completedAt != nil }
        }
        #expect(Daemon.entries(cdn) == [browser] && Daemon.entries("\(spool)/archive") == [browser], "\(Daemon.entries(cdn))")
        #expect(try Self.curl("GET", link.status).body.contains("\"state\":\"deleted\""))
        let trail = try Tool.run(Paths.binary, ["status", "--spool", spool, "--deleted", "--json"])
        let deleted = (try JSONSerialization.jsonObject(with: Data(trail.stdout.utf8)) as? [String: [[String: Any]]])?["deleted"] ?? []
        let actors = Dictionary(uniqueKeysWithValues: deleted.compactMap { entry in
            (entry["id"] as? String).map { ($0, (entry["reason"] as? [String: Any])?["by"] as? String ?? "") }
        })
        #expect(actors["app-clip"] == "api" && actors[moderated]?.hasPrefix("console:") == true && actors[shell]?.hasPrefix("cli:") == true,
                "\(actors)")
        #expect(try Self.curl("DELETE", url).status == 200, "deleted before: the first tombstone, unchanged")

        // In Chromium: refused to a read token and to a cross-site page; an operator deletes from
        // the job's page and sees the tombstone; the deleted view shows it without a reload.
        let drove = try console.driveDeletion(job: browser, timeout: 60)
        #expect(drove["read_forms"] as? Int == 0 && drove["read_post_status"] as? Int == 403, "\(drove)")
        #expect(drove["cross_site_status"] as? Int == 401, "a cross-site post carries no cookie: \(drove)")
        #expect(drove["forms"] as? Int == 1 && (drove["notice"] as? String)?.hasPrefix("Deleted 1 video") == true, "\(drove)")
        let detail = drove["detail_text"] as? String ?? ""
        #expect(detail.contains("rights holder notice 4411") && detail.contains("notice") && detail.contains("console:"), "\(detail)")
        #expect(drove["live_row"] as? Bool == true && drove["kept"] as? Int == 42, "the open deleted view shows it: \(drove)")
        #expect((drove["page_errors"] as? [String] ?? []).isEmpty, "\(drove)")
        #expect(JSONFile.read(Tombstone.self, from: "\(spool)/deleted/\(browser).json")?.reason.text == "rights holder notice 4411")
        // The console's deleted view lists them, with their code and who asked.
        let listed = try console.json("/console/jobs?state=deleted")["jobs"] as? [[String: Any]] ?? []
        #expect(Set(listed.compactMap { $0["id"] as? String }).isSuperset(of: ["app-clip", moderated, shell]), "\(listed)")
        #expect(listed.first { $0["id"] as? String == moderated }?["code"] as? String == "moderation")
        let notices = try console.json("/console/jobs?state=deleted&code=notice")["jobs"] as? [[String: Any]] ?? []
        #expect(Set(notices.compactMap { $0["id"] as? String }) == [shell, browser], "filtered by code: \(notices)")
        _ = (daemon, console)
    }
}
