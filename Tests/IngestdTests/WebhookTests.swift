import Ingest
import IngestdTesting
import Foundation
import Testing

/// Signed webhooks from `ingestd watch --webhook`, checked by a real HTTP receiver that
/// verifies every signature on its own: at least once across kill -9, wrong secrets detected,
/// a hanging receiver never holding up a job.
@Suite(.serialized, .offTheSharedPool) struct WebhookTests {
    struct Setup {
        var spool: String
        var cdn: String
        var secretFile: String
        var secret: String
        var base: String
    }

    func setUp(_ name: String) throws -> Setup {
        let base = Paths.scratch("webhook-\(name)")
        try? FileManager.default.removeItem(atPath: base)
        for directory in ["spool", "cdn"] {
            try FileManager.default.createDirectory(atPath: "\(base)/\(directory)", withIntermediateDirectories: true)
        }
        let secret = WebhookReceiver.makeSecret()
        try WebhookReceiver.writeSecret(secret, to: "\(base)/webhook.secret")
        return Setup(spool: "\(base)/spool", cdn: "\(base)/cdn", secretFile: "\(base)/webhook.secret", secret: secret, base: base)
    }

    func status(_ spool: String) throws -> [String: Any] {
        let result = try Tool.run(Paths.binary, ["status", "--spool", spool, "--json"])
        return try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any] ?? [:]
    }

    @Test func refusedDeliveriesSurviveKillNineAndArriveSignedWithTheirData() throws {
        let setup = try setUp("kill")
        let receiver = try WebhookReceiver(secret: setup.secret, mode: .refuseFirst, directory: "\(setup.base)/receiver")
        let arguments = ["--webhook", receiver.url, "--webhook-secret-file", setup.secretFile, "--webhook-schedule", "0,60,10"]
        var daemon: Daemon? = try Daemon(spool: setup.spool, cdn: setup.cdn, extra: arguments)
        // The transcode first, the quick rejections after: every refusal then falls within the
        // first retry's 60 s of the first one (the playable event's, which comes while the video is
        // still being made: the rest of the transcode is in that window too, which a loaded host
        // stretches).
        try Daemon.drop(Paths.sample("noaudio_odd.webm"), into: setup.spool, as: "good.webm")
        try Daemon.wait(timeout: 120, "the first refused first delivery (the playable event's)") { receiver.deliveries.contains { $0.status == 503 } }
        try Daemon.drop(Paths.sample("broken_truncated.mp4"), into: setup.spool, as: "broken.mp4")
        // An upload directory whose clip is missing: refused, and the event names the upload's own id.
        let directory = "\(setup.base)/dir-upload"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try Data(#"{"id": "app-upload-77", "clips": [{"file": "gone.mp4"}]}"#.utf8).write(to: URL(fileURLWithPath: "\(directory)/upload.json"))
        try FileManager.default.moveItem(atPath: directory, toPath: "\(setup.spool)/incoming/dir-upload")

        // Every first delivery is refused (503); kill -9 the daemon once all four (playable,
        // published and two rejections) were refused (the retries are 60 s away, so all four are
        // still pending then).
        // The receiver logs a request before it answers, and the sender records the refusal after
        // the answer: wait until the outbox holds all four again, each with its one attempt. A job
        // is filed after its webhook is recorded (docs/WEBHOOKS.md), and one killed before that
        // runs again on restart with a new event: wait for the three folders filed too.
        try Daemon.wait(timeout: 120, "four refused first deliveries, recorded pending, the uploads filed") {
            let pending = ((try? status(setup.spool)["webhooks"] as? [String: Any])??["undelivered"] as? [[String: Any]]) ?? []
            return Set(receiver.deliveries.filter { $0.status == 503 }.map(\.id)).count == 4
                && pending.count == 4 && pending.allSatisfy { $0["attempts"] as? Int == 1 }
                && Daemon.entries("\(setup.spool)/archive").count == 1 && Daemon.entries("\(setup.spool)/rejected").count == 2
        }
        kill(daemon!.pid, SIGKILL)
        daemon!.process.waitUntilExit()
        daemon = nil
        #expect(try status(setup.spool)["webhooks"].flatMap { ($0 as? [String: Any])?["pending"] as? Int } == 4)
        daemon = try Daemon(spool: setup.spool, cdn: setup.cdn, extra: arguments)
        // Settled as delivered only once the receiver has answered: wait for the outbox too.
        try Daemon.wait(timeout: 180, "every event accepted after the restart and recorded delivered") {
            let webhooks = (try? status(setup.spool)["webhooks"] as? [String: Any]) ?? nil
            return Set(receiver.deliveries.filter { $0.status == 204 }.map(\.id)).count == 4
                && webhooks?["delivered"] as? Int == 4 && webhooks?["pending"] as? Int == 0
        }
        let deliveries = receiver.deliveries
        #expect(deliveries.allSatisfy { $0.verified }, "every signature verifies")
        #expect(deliveries.allSatisfy { $0.contentType == "application/json" })
        for id in Set(deliveries.map(\.id)) {
            let attempts = deliveries.filter { $0.id == id }
            #expect(attempts.map(\.status) == [503, 204], "\(id): refused once, then delivered once: \(attempts.map(\.status))")
            #expect(attempts.map { $0.body as NSDictionary }.allSatisfy { $0 == attempts[0].body as NSDictionary }, "same body on every attempt")
        }
        let byType = Dictionary(grouping: deliveries.filter { $0.status == 204 }, by: { $0.type ?? "" })
        #expect(byType.keys.sorted() == ["upload.playable", "upload.published", "upload.rejected"])
        let published = try #require(byType["upload.published"]?.first).data
        let job = try #require(published["id"] as? String)
        // Playable, then published: the app hears the video can be played before it is done.
        let playable = try #require(byType["upload.playable"]?.first)
        #expect(playable.data["id"] as? String == job && playable.data["master"] as? String == "\(job)/master.m3u8")
        #expect((playable.data["playableAfterSeconds"] as? Double ?? -1) >= 0 && (playable.data["listedSeconds"] as? Double ?? 0) > 0)
        let order = deliveries.map { $0.type ?? "" }
        #expect(order.firstIndex(of: "upload.playable")! < order.firstIndex(of: "upload.published")!, "\(order)")
        #expect(FileManager.default.fileExists(atPath: "\(setup.cdn)/\(job)/manifest.json"))
        let master = try #require(published["master"] as? String)
        #expect(master == "\(job)/master.m3u8" && FileManager.default.fileExists(atPath: "\(setup.cdn)/\(master)"))
        let manifest = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: "\(setup.cdn)/\(job)/manifest.json"))) as? [String: Any] ?? [:]
        #expect(abs((published["durationSeconds"] as? Double ?? 0) - (manifest["durationSeconds"] as? Double ?? -1)) < 0.001)
        let renditions = published["renditions"] as? [[String: Any]] ?? []
        #expect(renditions.count == (manifest["renditions"] as? [Any])?.count && !renditions.isEmpty)
        for rendition in renditions {
            #expect(FileManager.default.fileExists(atPath: "\(setup.cdn)/\(rendition["playlist"] as? String ?? "-")"))
        }
        let posters = published["posters"] as? [[String: Any]] ?? []
        #expect(!posters.isEmpty && posters.allSatisfy { FileManager.default.fileExists(atPath: "\(setup.cdn)/\($0["path"] as? String ?? "-")") })
        let preview = try #require(published["preview"] as? [String: Any], "the animated preview is announced")
        let previewPath = preview["path"] as? String ?? "-"
        #expect(previewPath.hasPrefix("\(job)/") && previewPath.hasSuffix("/preview.webp") && FileManager.default.fileExists(atPath: "\(setup.cdn)/\(previewPath)"))
        #expect((preview["bytes"] as? Int ?? 0) > 0 && (preview["width"] as? Int ?? 0) > 0)
        // Every path the webhooks and `status --job --json` name, over HTTP as docs/OUTPUT.md serves a directory CDN.
        let nginx = try NginxCDN(root: setup.cdn, directory: "\(setup.base)/nginx")
        var paths = playable.playedPaths + (byType["upload.published"] ?? []).flatMap(\.playedPaths) + [previewPath]
        let shown = try #require(try JSONSerialization.jsonObject(with: Data(try Tool.run(Paths.binary,
            ["status", "--spool", setup.spool, "--job", job, "--json"]).stdout.utf8)) as? [String: Any])
        let output = try #require(shown["output"] as? String, "\(shown)")
        let listed = try #require(shown["manifest"] as? [String: Any], "\(shown)")
        paths += [listed["master"], listed["mp4"]].compactMap { $0 as? String }.map { "\((output as NSString).lastPathComponent)/\($0)" }
        #expect(paths.count >= 9, "\(paths)")
        for path in paths {
            let got = try Tool.run("curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", nginx.baseURL + path])
            #expect(got.stdout == "200", "\(path): \(got.stdout)")
        }
        let refusals = byType["upload.rejected"] ?? []
        let codes = Dictionary(uniqueKeysWithValues: refusals.map { ($0.data["uploadId"] as? String ?? "(file)", ($0.data["reason"] as? [String: Any])?["code"] as? String) })
        #expect(codes == ["(file)": "corrupt_input", "app-upload-77": "bad_upload"], "\(codes)")
        let webhooks = try #require(try status(setup.spool)["webhooks"] as? [String: Any])
        #expect(webhooks["pending"] as? Int == 0 && webhooks["delivered"] as? Int == 4 && webhooks["dead"] as? Int == 0)
        _ = daemon
    }

    @Test func aWrongSecretIsDetectedByTheReceiverAndTheEventEndsDead() throws {
        let setup = try setUp("wrong")
        let receiver = try WebhookReceiver(secret: WebhookReceiver.makeSecret(), directory: "\(setup.base)/receiver")
        let daemon = try Daemon(spool: setup.spool, cdn: setup.cdn, extra: [
            "--webhook", receiver.url, "--webhook-secret-file", setup.secretFile, "--webhook-schedule", "0,0.5"])
        try Daemon.drop(Paths.sample("broken_truncated.mp4"), into: setup.spool, as: "broken.mp4")
        try Daemon.wait(timeout: 60, "the event to end dead") {
            (try? status(setup.spool)["webhooks"] as? [String: Any])??["dead"] as? Int == 1
        }
        let deliveries = receiver.deliveries
        #expect(deliveries.count == 2 && deliveries.allSatisfy { !$0.verified && $0.status == 401 }, "the receiver refuses both: \(deliveries.map(\.status))")
        let webhooks = try #require(try status(setup.spool)["webhooks"] as? [String: Any])
        let dead = try #require((webhooks["undelivered"] as? [[String: Any]])?.first)
        #expect(dead["lastError"] as? String == "HTTP 401" && dead["attempts"] as? Int == 2)
        let text = try Tool.run(Paths.binary, ["status", "--spool", setup.spool]).stdout
        #expect(text.contains("webhooks: pending 0, delivered 0, dead 1") && text.contains("last error: HTTP 401"), "\(text)")
        _ = daemon
    }

    @Test func aHangingReceiverNeverHoldsUpJobs() throws {
        let setup = try setUp("hang")
        let receiver = try WebhookReceiver(secret: setup.secret, mode: .hang, directory: "\(setup.base)/receiver")
        let daemon = try Daemon(spool: setup.spool, cdn: setup.cdn, extra: [
            "--webhook", receiver.url, "--webhook-secret-file", setup.secretFile, "--webhook-timeout", "1",
            "--webhook-schedule", "0,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1"])
        try Daemon.drop(Paths.sample("broken_truncated.mp4"), into: setup.spool, as: "first.mp4")
        try Daemon.wait(timeout: 30, "the first delivery to hang") { !receiver.deliveries.isEmpty }
        // While that delivery hangs, the next upload is transcoded and published as usual.
        try Daemon.drop(Paths.sample("noaudio_odd.webm"), into: setup.spool, as: "second.webm")
        try Daemon.wait(timeout: 60, "the second upload to be published") { Daemon.entries("\(setup.spool)/archive").count == 1 }
        try Daemon.wait(timeout: 30, "timed-out attempts recorded") {
            let pending = ((try? status(setup.spool)["webhooks"] as? [String: Any])??["undelivered"] as? [[String: Any]]) ?? []
            return pending.count == 3 && pending.allSatisfy { ($0["attempts"] as? Int ?? 0) >= 1 && $0["lastError"] as? String == "timed out after 1.0 s" }
        }
        _ = daemon
    }

    /// A receiver that answers 200 and then never sends the body it announced: the answer
    /// counts (2xx), and the stalled read ends at the timeout instead of holding the slot forever.
    @Test func aReceiverStallingInTheBodyDoesNotHoldTheSender() throws {
        let setup = try setUp("stall")
        let receiver = try WebhookReceiver(secret: setup.secret, mode: .stallBody, directory: "\(setup.base)/receiver")
        let daemon = try Daemon(spool: setup.spool, cdn: setup.cdn, extra: [
            "--webhook", receiver.url, "--webhook-secret-file", setup.secretFile, "--webhook-timeout", "1"])
        try Daemon.drop(Paths.sample("broken_truncated.mp4"), into: setup.spool, as: "one.mp4")
        try Daemon.drop(Paths.sample("broken_truncated.mp4"), into: setup.spool, as: "two.mp4")
        try Daemon.wait(timeout: 60, "both events recorded as delivered") {
            ((try? status(setup.spool)["webhooks"] as? [String: Any])??["delivered"] as? Int) == 2
        }
        #expect(receiver.deliveries.count == 2, "each sent once: \(receiver.deliveries.map(\.id))")
        _ = daemon
    }

    @Test func theSecretFileMustBePrivateAndWellFormed() throws {
        let setup = try setUp("secret")
        let path = setup.secretFile
        func start() throws -> Tool.Result {
            try Tool.run(Paths.binary, ["watch", "--spool", setup.spool, "--cdn", setup.cdn, "--webhook", "http://127.0.0.1:9/x",
                                        "--webhook-secret-file", path])
        }
        chmod(path, 0o644)
        var result = try start()
        #expect(result.status == 78 && result.stderr.contains(path) && result.stderr.contains("chmod 600"), "\(result.stderr)")
        try Data().write(to: URL(fileURLWithPath: path))
        chmod(path, 0o600)
        result = try start()
        #expect(result.status == 78 && result.stderr.contains("empty"), "\(result.stderr)")
        try WebhookReceiver.writeSecret("not-a-secret", to: path)
        result = try start()
        #expect(result.status == 78 && result.stderr.contains("whsec_"), "\(result.stderr)")
        try FileManager.default.removeItem(atPath: path)
        result = try start()
        #expect(result.status == 78 && result.stderr.contains(path), "\(result.stderr)")
        result = try Tool.run(Paths.binary, ["watch", "--spool", setup.spool, "--cdn", setup.cdn, "--webhook", "http://127.0.0.1:9/x"])
        #expect(result.status == 64 && result.stderr.contains("--webhook-secret-file"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: "\(setup.spool)/outbox"), "nothing started")
    }

    /// Two daemons on one spool share its outbox: each event is sent by one of them, once (a
    /// sender reserves an event by renaming it before it sends). Before the reservation both
    /// senders sent most of the 30 events. A reservation left by a killed sender goes back.
    @Test func twoDaemonsSharingAnOutboxSendEachEventOnce() throws {
        let setup = try setUp("shared-outbox")
        let receiver = try WebhookReceiver(secret: setup.secret, mode: .slow, directory: "\(setup.base)/receiver")
        let outbox = Outbox(root: "\(setup.spool)/outbox")
        try outbox.create()
        let ids = (0..<30).map { "msg_shared_\($0)" }
        for id in ids {
            try outbox.record(OutboxEvent(id: id, type: "upload.published", createdAt: Date(), body: #"{"type":"upload.published","data":{}}"#,
                                          attempts: 0, nextAttemptAt: Date(), lastError: nil))
        }
        // A reservation whose sender was killed (no such process): sent again, once.
        let orphan = "msg_shared_orphan"
        try outbox.record(OutboxEvent(id: orphan, type: "upload.published", createdAt: Date(), body: #"{"type":"upload.published","data":{}}"#,
                                      attempts: 0, nextAttemptAt: Date(), lastError: nil))
        #expect(rename("\(setup.spool)/outbox/pending/\(orphan).json", "\(setup.spool)/outbox/pending/.\(orphan).json.sending-999999") == 0)
        let arguments = ["--webhook", receiver.url, "--webhook-secret-file", setup.secretFile]
        let first = try Daemon(spool: setup.spool, cdn: setup.cdn, extra: arguments)
        let second = try Daemon(spool: setup.spool, cdn: setup.cdn, extra: arguments)
        try Daemon.wait(timeout: 120, "the events delivered") { Set(receiver.deliveries.map(\.id)).isSuperset(of: ids) }
        try Daemon.wait(timeout: 60, "the orphaned reservation sent") { receiver.deliveries.contains { $0.id == orphan } }
        // Counted once nothing is pending or reserved any more: no sender has a send left to make.
        try Daemon.wait(timeout: 30, "the outbox settled") { outbox.count(.delivered) == ids.count + 1 && outbox.count(.pending) == 0 }
        let sent = receiver.deliveries.map(\.id)
        let repeated = Dictionary(grouping: sent, by: { $0 }).filter { $0.value.count > 1 }.keys.sorted()
        #expect(repeated.isEmpty, "sent more than once: \(repeated)")
        #expect(receiver.deliveries.filter { $0.id == orphan }.count == 1)
        _ = (first, second)
    }

    /// Delivered events are kept a week in the spool's outbox, then the sender drops them.
    @Test func deliveredEventsArePrunedAfterAWeek() throws {
        let setup = try setUp("prune")
        let receiver = try WebhookReceiver(secret: setup.secret, directory: "\(setup.base)/receiver")
        let outbox = Outbox(root: "\(setup.spool)/outbox")
        try outbox.create()
        for (id, days) in [("msg_old", 8.0), ("msg_recent", 6.0)] {
            var event = OutboxEvent(id: id, type: "upload.published", createdAt: Date(timeIntervalSinceNow: -days * 86_400), body: "{}",
                                    attempts: 1, nextAttemptAt: Date(), lastError: nil)
            event.deliveredAt = event.createdAt
            try outbox.settle(event, as: .delivered)
        }
        let daemon = try Daemon(spool: setup.spool, cdn: setup.cdn, extra: ["--webhook", receiver.url, "--webhook-secret-file", setup.secretFile])
        try Daemon.wait(timeout: 60, "the week-old event pruned") { outbox.count(.delivered) == 1 }
        #expect(outbox.events(in: .delivered).map(\.id) == ["msg_recent"])
        _ = daemon
    }
}
