import Foundation
@testable import Ingest
import IngestdTesting
import Testing

/// `ingestd delete` on a spool and a directory CDN served by nginx (#65): a published, a
/// growing, a queued, a rejected and a failed video taken down; nothing of them is left, every
/// path named before answers 404, the other video's bytes are unchanged, and neither `retry`,
/// `reprocess` nor the daemon brings one back. Then a delete killed at each of its steps, and
/// finished by the next run.
@Suite(.serialized, .offTheSharedPool, .enabled(if: NginxCDN.binary != nil, "nginx is not installed"))
struct DeletionTests {
    static let reason = ["--reason-code", "owner", "--reason", "deleted in the app"]

    static func delete(_ spool: String, _ cdn: String, _ ids: [String], extra: [String] = [], environment: [String: String] = [:]) throws
        -> (status: Int32, results: [[String: Any]], stderr: String) {
        let run = try Tool.run(Paths.binary, ["delete", "--spool", spool, "--cdn", cdn, "--json"] + reason + extra + ids, environment: environment)
        let answer = (try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8))) as? [String: Any]
        return (run.status, answer?["results"] as? [[String: Any]] ?? [], run.stderr + run.stdout)
    }

    /// Every file under `directory`, by relative path, with its sha256.
    static func digests(_ directory: String) -> [String: String] {
        let listing = (try? Tool.run("sh", ["-c", "cd \"$1\" && find . -type f -print0 | xargs -0 -r sha256sum", "sh", directory]))?.stdout ?? ""
        var digests: [String: String] = [:]
        for line in listing.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1)
            if parts.count == 2 { digests[String(parts[1].trimmingCharacters(in: .whitespaces).dropFirst(2))] = String(parts[0]) }
        }
        return digests
    }

    static func httpStatus(_ url: String) throws -> Int {
        Int(try Tool.run("curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", url]).stdout) ?? 0
    }

    /// Names under `root` that belong to video `id` (its directory, stagings, an aside copy).
    static func leftovers(of id: String, in root: String) -> [String] {
        Daemon.entries(root).filter { $0 == id || $0.hasPrefix(".\(id).") }
            + ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).filter { $0.hasPrefix(".\(id).") }
    }

    @Test func aDeletedVideoLeavesNothingAndNothingBringsItBack() throws {
        let base = Paths.scratch("deletion")
        try? FileManager.default.removeItem(atPath: base)
        let spool = "\(base)/spool", cdn = "\(base)/cdn"
        try FileManager.default.createDirectory(atPath: cdn, withIntermediateDirectories: true)
        let secret = WebhookReceiver.makeSecret()
        try WebhookReceiver.writeSecret(secret, to: "\(base)/webhook.secret")
        let receiver = try WebhookReceiver(secret: secret, directory: "\(base)/receiver")
        let nginx = try NginxCDN(root: cdn, directory: "\(base)/nginx")
        let hooks = ["--webhook", receiver.url, "--webhook-secret-file", "\(base)/webhook.secret", "--webhook-schedule", "0,0.5"]
        var daemon: Daemon? = try Daemon(spool: spool, cdn: cdn, extra: ["--jobs", "1"] + hooks, log: "\(base)/watch.log")
        try Daemon.drop(Paths.smallSample, into: spool, as: "keep.mp4")
        try Daemon.drop(Paths.smallSample, into: spool, as: "gone.mp4")
        try Daemon.drop(Paths.sample("broken_truncated.mp4"), into: spool, as: "bad.mp4")
        try Daemon.drop(Paths.sample("broken_truncated.mp4"), into: spool, as: "failing.mp4")
        try Daemon.wait(timeout: 180, "two published, two rejected, their webhooks delivered") {
            Daemon.entries("\(spool)/archive").count == 2 && Daemon.entries("\(spool)/rejected").count == 2 && receiver.deliveries.count >= 4
                && Daemon.entries("\(spool)/rejected").allSatisfy { !JobLock.isHeld(directory: "\(spool)/rejected/\($0)") }
        }
        let published = receiver.deliveries.filter { $0.type == "upload.published" }
        let gone = try #require(Daemon.entries("\(spool)/archive").first { $0.hasPrefix("gone-") })
        let keep = try #require(Daemon.entries("\(spool)/archive").first { $0.hasPrefix("keep-") })
        let rejected = Daemon.entries("\(spool)/rejected").sorted()
        // A failed job, as `failed/` keeps one (retries spent): the rejected folder moved there.
        let failed = rejected[1]
        #expect(rename("\(spool)/rejected/\(failed)", "\(spool)/failed/\(failed)") == 0)
        // Every path a webhook named for the video, served before the delete.
        let data = try #require(published.first { $0.data["id"] as? String == gone }?.data)
        var named = [data["master"] as? String, data["mp4"] as? String].compactMap { $0 }
        named += (data["renditions"] as? [[String: Any]] ?? []).compactMap { $0["playlist"] as? String }
        named += (data["posters"] as? [[String: Any]] ?? []).compactMap { $0["path"] as? String }
        #expect(named.count >= 5, "\(data)")
        for path in named { #expect(try Self.httpStatus(nginx.url(path)) == 200, "\(path) before") }
        let kept = Self.digests("\(cdn)/\(keep)")

        // Growing: shown while its job process is stopped (SIGSTOP), deleted while it plays.
        try Daemon.drop(Paths.smallSample, into: spool, as: "growing.mp4")
        let job = try Daemon.jobProcess(of: daemon!.pid)
        let growing = try #require(Daemon.entries("\(spool)/work").first)
        try Daemon.wait(timeout: 60, "the growing video shown") { FileManager.default.fileExists(atPath: "\(cdn)/\(growing)/master.m3u8") }
        kill(job, SIGSTOP)
        #expect(try Self.httpStatus(nginx.url("\(growing)/master.m3u8")) == 200)
        let pending = try Self.delete(spool, cdn, [growing], extra: ["--wait", "0"])
        #expect(pending.status == 75 && pending.results.first?["result"] as? String == "pending", "\(pending)")
        #expect(try Self.httpStatus(nginx.url("\(growing)/master.m3u8")) == 404, "out of view at once, while its attempt still runs")
        kill(job, SIGCONT)

        let deleted = try Self.delete(spool, cdn, [gone, rejected[0], failed])
        #expect(deleted.status == 0 && deleted.results.allSatisfy { $0["result"] as? String == "deleted" }, "\(deleted)")
        try Daemon.wait(timeout: 120, "the growing video's deletion completed by the daemon once its attempt stopped") {
            (JSONFile.read(Tombstone.self, from: "\(spool)/deleted/\(growing).json"))?.completedAt != nil
        }

        for id in [gone, rejected[0], failed, growing] {
            #expect(Self.leftovers(of: id, in: cdn).isEmpty, "\(id): \(Self.leftovers(of: id, in: cdn))")
            for state in SpoolLayout.State.allCases { #expect(!FileManager.default.fileExists(atPath: "\(spool)/\(state.rawValue)/\(id)"), "\(state) \(id)") }
            let status = try Tool.run(Paths.binary, ["status", "--spool", spool, "--job", id, "--json"])
            let snapshot = (try? JSONSerialization.jsonObject(with: Data(status.stdout.utf8))) as? [String: Any]
            #expect(snapshot?["state"] as? String == "deleted" && (snapshot?["reason"] as? [String: Any])?["code"] as? String == "owner",
                    "\(id): \(status.stdout)")
        }
        for path in named { #expect(try Self.httpStatus(nginx.url(path)) == 404, "\(path) after") }
        #expect(Self.digests("\(cdn)/\(keep)") == kept, "the other video's bytes are unchanged")
        #expect(try Self.httpStatus(nginx.url("\(keep)/master.m3u8")) == 200)

        // Deleting twice, or an unknown id: said, never hiding the first deletion.
        let again = try Self.delete(spool, cdn, [gone, "no-such-job"])
        #expect(again.status == 1 && again.results.map { $0["result"] as? String } == ["already_deleted", "unknown"], "\(again)")
        #expect(((again.results.first?["tombstone"] as? [String: Any])?["reason"] as? [String: Any])?["text"] as? String == "deleted in the app")

        // The app hears: upload.deleted, signed, naming what to purge.
        try Daemon.wait(timeout: 30, "the upload.deleted webhooks") {
            Set(receiver.deliveries.filter { $0.type == "upload.deleted" }.compactMap { $0.data["id"] as? String }) == [gone, rejected[0], failed, growing]
        }
        let notice = try #require(receiver.deliveries.first { $0.type == "upload.deleted" && $0.data["id"] as? String == gone })
        #expect(notice.verified && notice.data["code"] as? String == "owner" && notice.data["reason"] as? String == "deleted in the app")
        let purge = try #require(notice.data["purge"] as? [String: Any])
        #expect(purge["prefixes"] as? [String] == ["\(gone)/"] && Set(named).isSubset(of: Set(purge["paths"] as? [String] ?? [])), "\(purge)")

        // Nothing brings it back: retry, reprocess, the daemon's next claims, a new upload with its id.
        let retried = try Tool.run(Paths.binary, ["retry", "--spool", spool, "--rejected", "--json", rejected[0], failed])
        let retry = (try? JSONSerialization.jsonObject(with: Data(retried.stdout.utf8))) as? [String: [String]]
        #expect(retried.status == 1 && retry?["retried"] == [] && Set(retry?["skipped"] ?? []) == [rejected[0], failed], "\(retried.stdout)")
        daemon = nil
        let reprocess = try Tool.run(Paths.binary, ["reprocess", "\(spool)/archive", "--cdn", cdn, "--only", gone, "--json"])
        #expect(reprocess.status == 0 && !reprocess.stdout.contains("\"published\""), "\(reprocess.stdout) \(reprocess.stderr)")
        for id in [gone, rejected[0], failed, growing] { #expect(Self.leftovers(of: id, in: cdn).isEmpty, "reprocess left \(id)") }
        _ = receiver
    }

    /// A delete killed (kill -9) after each of its steps is finished by the next run: the
    /// tombstone was recorded first, the purge list before anything was removed.
    @Test func aDeleteKilledAtAnyStepIsFinishedByTheNextRun() throws {
        let base = Paths.scratch("deletion-kill")
        try? FileManager.default.removeItem(atPath: base)
        let spool = "\(base)/spool", cdn = "\(base)/cdn"
        var daemon: Daemon? = try Daemon(spool: spool, cdn: cdn, extra: ["--jobs", "1"])
        try Daemon.drop(Paths.smallSample, into: spool, as: "clip.mp4")
        try Daemon.wait(timeout: 120, "published and let go") {
            Daemon.entries("\(spool)/archive").count == 1 && Daemon.entries("\(spool)/archive").allSatisfy { !JobLock.isHeld(directory: "\(spool)/archive/\($0)") }
        }
        daemon = nil
        let original = try #require(Daemon.entries("\(spool)/archive").first)
        let files = Set(Self.digests("\(cdn)/\(original)").keys)
        // One copy of the published video per step, as the daemon would have left it.
        let steps = ["recorded", "listed", "media", "upload"]
        for step in steps {
            let id = "clip-\(step)"
            _ = try Tool.run("cp", ["-a", "\(spool)/archive/\(original)", "\(spool)/archive/\(id)"])
            _ = try Tool.run("cp", ["-a", "\(cdn)/\(original)", "\(cdn)/\(id)"])
            var record = try JSONFile.load(JobRecord.self, from: "\(spool)/archive/\(id)/job.json")
            record.id = id
            record.place = PlaybackPlace(root: cdn, id: id)
            try JSONFile.write(record, to: "\(spool)/archive/\(id)/job.json")
            let killed = try Self.delete(spool, cdn, [id], environment: ["INGESTD_DELETE_KILL_AFTER": step])
            #expect(killed.status == 9, "\(step): killed after it (\(killed))")
            let tombstone = try #require(JSONFile.read(Tombstone.self, from: "\(spool)/deleted/\(id).json"), "recorded before anything else")
            #expect(tombstone.completedAt == nil)
            #expect(FileManager.default.fileExists(atPath: "\(cdn)/\(id)") == (step == "recorded" || step == "listed"), "\(step)")
        }
        // The next `delete` of an id finishes it; the daemon's upkeep finishes the others.
        let finished = try Self.delete(spool, cdn, ["clip-recorded"])
        #expect(finished.status == 0 && finished.results.first?["result"] as? String == "deleted", "\(finished)")
        daemon = try Daemon(spool: spool, cdn: cdn, extra: ["--jobs", "1"])
        try Daemon.wait(timeout: 60, "the daemon to finish the rest") {
            steps.allSatisfy { JSONFile.read(Tombstone.self, from: "\(spool)/deleted/clip-\($0).json")?.completedAt != nil }
        }
        for step in steps {
            let id = "clip-\(step)"
            let tombstone = try #require(JSONFile.read(Tombstone.self, from: "\(spool)/deleted/\(id).json"))
            #expect(Set(tombstone.purge) == Set(files.map { "\(id)/\($0)" }), "\(step): the purge list names every file, saved before they went")
            #expect(Self.leftovers(of: id, in: cdn).isEmpty && !FileManager.default.fileExists(atPath: "\(spool)/archive/\(id)"), "\(step)")
        }
        #expect(Self.digests("\(cdn)/\(original)").count == files.count, "the video copied from is untouched")
        _ = daemon
    }
}
