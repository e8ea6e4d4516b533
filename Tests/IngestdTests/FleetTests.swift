import IngestdTesting
import Foundation
import Testing
import Transcode

/// `ingestd submit` + `ingestd worker` on a real PostgreSQL server: many workers, one queue,
/// every job published exactly once whatever happens to a worker or to the database.
@Suite(.serialized, .enabled(if: PostgresServer.binaries != nil, "PostgreSQL is not installed"))
struct FleetTests {
    /// A worker process standing in for a host.
    final class Worker {
        let process = Process()
        let log: String

        init(database: String, cdn: String, uploads: String, name: String, extra: [String] = []) throws {
            log = Paths.scratch("worker-\(name).log")
            try FileManager.default.createDirectory(atPath: cdn, withIntermediateDirectories: true)
            _ = FileManager.default.createFile(atPath: log, contents: nil)
            // Started directly (a `setsid` wrapper would fork, and Foundation would then wait
            // for the worker through the descriptor it inherits).
            process.executableURL = URL(fileURLWithPath: Paths.binary)
            // A lease long enough that a loaded host's late renewal never costs an attempt; the
            // workers a test kills or freezes pass a short one, which the test waits out.
            process.arguments = ["worker", "--database", database, "--cdn", cdn, "--uploads", uploads, "--lease", "20", "--poll", "0.5",
                                 "--backoff", "0.2", "--jobs", "1"] + extra
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle(forWritingAtPath: log)
            try process.run()
        }

        deinit {
            if process.isRunning {
                kill(process.processIdentifier, SIGCONT)
                kill(process.processIdentifier, SIGKILL)
            }
            process.waitUntilExit()
        }

        var pid: Int32 { process.processIdentifier }
        var output: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }
    }

    /// Copies samples into `base/uploads` (the uploads root); returns the root and the copies.
    func stage(_ samples: [String], in base: String) throws -> (uploads: String, paths: [String]) {
        let uploads = "\(base)/uploads"
        try FileManager.default.createDirectory(atPath: uploads, withIntermediateDirectories: true)
        let paths = samples.map { "\(uploads)/\(($0 as NSString).lastPathComponent)" }
        for (sample, path) in zip(samples, paths) where !FileManager.default.fileExists(atPath: path) {
            try FileManager.default.copyItem(atPath: Paths.sample(sample), toPath: path)
        }
        return (uploads, paths)
    }

    func submit(_ database: String, _ inputs: [String], uploads: String, extra: [String] = []) throws -> (Tool.Result, [[String: String]]) {
        let result = try Tool.run(Paths.binary, ["submit", "--database", database, "--uploads", uploads, "--json"] + extra + inputs)
        let body = (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: String]]) ?? []
        return (result, body)
    }

    func counts(_ server: PostgresServer) throws -> [String: Int] {
        let rows = try server.sql("SELECT state || '=' || count(*) FROM ingestd_jobs GROUP BY state")
        return Dictionary(uniqueKeysWithValues: rows.split(separator: "\n").map {
            let parts = $0.split(separator: "=")
            return (String(parts[0]), Int(parts[1]) ?? 0)
        })
    }

    /// Every job is published exactly once: one `published` row event each, its CDN directory
    /// complete and playable, nothing else (no staging) in the CDN.
    func expectPublishedExactlyOnce(_ server: PostgresServer, cdn: String, ids: [String]) throws {
        #expect(try counts(server) == ["published": ids.count])
        let events = try server.sql("SELECT job_id FROM ingestd_job_events WHERE event = 'published' ORDER BY job_id")
            .split(separator: "\n").map(String.init)
        #expect(events == ids.sorted(), "one published event per job: \(events)")
        #expect(Daemon.entries(cdn) == ids.sorted(), "only the published jobs, no staging: \(Daemon.entries(cdn))")
        for id in ids {
            let manifest = try JSONDecoder().decode(ReadyManifest.self, from: Data(contentsOf: URL(fileURLWithPath: "\(cdn)/\(id)/manifest.json")))
            let frames = try Tool.ffprobe(["-count_frames", "-select_streams", "v:0", "-show_entries", "stream=nb_read_frames",
                                           "\(cdn)/\(id)/\(manifest.renditions[0].playlist)"])
            #expect(frames.list("streams").first?.int("nb_read_frames") == Int((manifest.durationSeconds * 30).rounded()), "\(id)")
        }
    }

    @Test func submitChecksEveryInputBeforeQueueingAny() throws {
        let server = try PostgresServer(name: "submit")
        let migrate = try Tool.run(Paths.binary, ["db", "migrate", "--database", server.url])
        #expect(migrate.status == 0 && migrate.stdout.contains("schema version"), "\(migrate.stderr)")
        let base = Paths.scratch("fleet-submit")
        try? FileManager.default.removeItem(atPath: base)
        let (uploads, staged) = try stage(["hdr_hlg.mp4", "portrait_rotated.mp4", "upload"], in: base)
        try FileManager.default.createDirectory(atPath: "\(uploads)/no-manifest", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: "\(uploads)/link.mp4", withDestinationPath: staged[0])
        try FileManager.default.createSymbolicLink(atPath: "\(uploads)/linked-dir", withDestinationPath: Paths.root + "/samples")
        let good = staged[0]
        // A manifest PostgreSQL's jsonb could not store (U+0000 in a metadata value): refused at submit, by field.
        try FileManager.default.copyItem(atPath: staged[2], toPath: "\(uploads)/nul-upload")
        let manifest = try String(contentsOfFile: "\(uploads)/nul-upload/upload.json", encoding: .utf8)
            .replacingOccurrences(of: "three clips and a song", with: "three clips\\u0000and a song")
        try manifest.write(toFile: "\(uploads)/nul-upload/upload.json", atomically: true, encoding: .utf8)
        let refused: [(String, Int32, String)] = [("\(uploads)/nul-upload", 65, "bad_upload"),("\(uploads)/missing.mp4", 66, "missing"), ("\(uploads)/no-manifest", 65, "bad_upload"),
                                                  ("\(uploads)/link.mp4", 65, "symlink"), ("/dev/null", 65, "outside_uploads"),
                                                  (Paths.sample("hdr_hlg.mp4"), 65, "outside_uploads"),
                                                  ("\(uploads)/linked-dir/hdr_hlg.mp4", 65, "outside_uploads")]
        for (input, status, code) in refused {
            let (result, _) = try submit(server.url, [good, input], uploads: uploads)
            #expect(result.status == status, "\(input): \(result.stderr)")
            let error = (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: [String: Any]])?["error"]
            #expect(error?["code"] as? String == code, "\(input): \(result.stdout)")
            #expect(result.stderr.contains(input) && result.stderr.contains("nothing was queued"))
        }
        #expect(try server.sql("SELECT count(*) FROM ingestd_jobs") == "0", "nothing queued when one input is bad")
        let (nul, _) = try submit(server.url, ["\(uploads)/nul-upload"], uploads: uploads)
        #expect(nul.stderr.contains("metadata") && nul.stderr.contains("U+0000"), "names the field and the character: \(nul.stderr)")
        var preset = Preset.builtIn
        preset.limits.maxBytes = 100_000
        let presetPath = Paths.scratch("fleet-submit-preset.json")
        try preset.canonicalJSON().write(to: URL(fileURLWithPath: presetPath))
        let (tooBig, _) = try submit(server.url, [staged[1]], uploads: uploads, extra: ["--preset", presetPath])
        #expect(tooBig.status == 65 && tooBig.stderr.contains("exceeds the limit of 100000 bytes"))

        let (accepted, jobs) = try submit(server.url, [good, staged[2]], uploads: uploads)
        #expect(accepted.status == 0, "\(accepted.stderr)")
        #expect(jobs.map { $0["input"] ?? "" } == [good, staged[2]])
        #expect(FileManager.default.fileExists(atPath: "\(uploads)/.ingestd-uploads"), "submit leaves the root's marker")
        let status = try Tool.run(Paths.binary, ["status", "--database", server.url, "--json"])
        let body = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
        #expect((body?["counts"] as? [String: Int])?["queued"] == 2)
        #expect((body?["states"] as? [String: Int]) == ["queued": 2, "running": 0, "published": 0, "rejected": 0, "failed": 0, "deleted": 0])
        #expect(Set(((body?["jobs"] as? [[String: Any]]) ?? []).compactMap { $0["id"] as? String }) == Set(jobs.compactMap { $0["id"] }))
        let unreachable = try Tool.run(Paths.binary, ["submit", "--database", "postgres://ingestd@127.0.0.1:\(try PostgresServer.freePort())/x",
                                                      "--uploads", uploads, good])
        #expect(unreachable.status == 69, "\(unreachable.stderr)")
    }

    /// Three workers; one is killed (SIGKILL) mid-job, one is frozen (SIGSTOP, with its job
    /// process) past its lease and thawed once another worker has published its job. Every job
    /// ends exactly once; the thawed worker neither replaces nor duplicates the output.
    @Test func threeWorkersKillOneFreezeOneEveryJobPublishedOnce() throws {
        let server = try PostgresServer(name: "three")
        let base = Paths.scratch("fleet-three")
        try? FileManager.default.removeItem(atPath: base)
        let cdn = "\(base)/cdn"
        let inputs = [Paths.smallSample, "landscape_60fps.mp4", Paths.smallSample, "hdr_hlg.mp4", "noaudio_odd.webm", "landscape_60fps.mp4"]
        try FileManager.default.createDirectory(atPath: "\(base)/uploads", withIntermediateDirectories: true)
        var paths: [String] = []
        for (index, name) in inputs.enumerated() {
            let path = "\(base)/uploads/\(index)-\((name as NSString).lastPathComponent)"
            try FileManager.default.copyItem(atPath: Paths.sample(name), toPath: path)
            paths.append(path)
        }
        let (submitted, jobs) = try submit(server.url, paths, uploads: "\(base)/uploads")
        #expect(submitted.status == 0, "\(submitted.stderr)")
        let ids = jobs.compactMap { $0["id"] }
        var killed: Worker? = try Worker(database: server.url, cdn: cdn, uploads: "\(base)/uploads", name: "killed", extra: ["--lease", "3"])
        let frozen = try Worker(database: server.url, cdn: cdn, uploads: "\(base)/uploads", name: "frozen", extra: ["--lease", "3"])
        let steady = try Worker(database: server.url, cdn: cdn, uploads: "\(base)/uploads", name: "steady")
        func runningJob(of worker: Worker) throws -> String? {
            let rows = try server.sql("SELECT id FROM ingestd_jobs WHERE state = 'running' AND worker LIKE '%/\(worker.pid)'")
            return rows.isEmpty ? nil : rows
        }
        // The doomed workers run in the test's steps until each runs a job with its process
        // alive, and stay stopped: neither job can end before the kill and the freeze.
        let doomed = [killed!.pid, frozen.pid]
        try Daemon.step(doomed, timeout: 120, "both doomed workers to be running a job") {
            (try? runningJob(of: killed!)) != nil && (try? runningJob(of: frozen)) != nil
                && doomed.allSatisfy { Daemon.runningJobProcess(of: $0) != nil }
        }
        let frozenJob = try #require(try runningJob(of: frozen))
        // Freeze the host: the worker and its job process.
        let frozenChildren = Daemon.children(of: frozen.pid)
        for pid in [frozen.pid] + frozenChildren { kill(pid, SIGSTOP) }
        kill(killed!.pid, SIGKILL)
        killed = nil
        try Daemon.wait(timeout: 240, "the frozen worker's job to be published by another worker") {
            (try? server.sql("SELECT state || ' ' || worker FROM ingestd_jobs WHERE id = '\(frozenJob)'"))
                .map { $0.hasPrefix("published") && !$0.hasSuffix("/\(frozen.pid)") } ?? false
        }
        let publishedBefore = try Data(contentsOf: URL(fileURLWithPath: "\(cdn)/\(frozenJob)/manifest.json"))
        for pid in frozenChildren + [frozen.pid] { kill(pid, SIGCONT) }
        try Daemon.wait(timeout: 300, "every job to end") { (try? counts(server)) == ["published": ids.count] }
        // Its first "lease lost" line comes before the job process is stopped; the last one says
        // the staging is gone.
        try Daemon.wait(timeout: 30, "the thawed worker to give up its stale attempt") {
            frozen.output.contains("staging removed")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: "\(cdn)/\(frozenJob)/manifest.json")) == publishedBefore,
                "the thawed worker did not replace the published output")
        try expectPublishedExactlyOnce(server, cdn: cdn, ids: ids)
        let lost = try server.sql("SELECT count(*) FROM ingestd_job_events WHERE event = 'lease_lost'")
        #expect((Int(lost) ?? 0) >= 2, "the killed and the frozen worker's leases expired and were rescued")
        _ = (steady, frozen)
    }

    /// `pg_ctl restart -m immediate` in the middle of a batch: workers reconnect, nothing is
    /// lost or done twice.
    @Test func postgresRestartMidBatchLosesNothing() throws {
        let server = try PostgresServer(name: "restart")
        let base = Paths.scratch("fleet-restart")
        try? FileManager.default.removeItem(atPath: base)
        let cdn = "\(base)/cdn"
        let names = [Paths.smallSample, "landscape_60fps.mp4", "hdr_hlg.mp4", "noaudio_odd.webm"]
        let (uploads, paths) = try stage(names, in: base)
        let (submitted, jobs) = try submit(server.url, paths, uploads: uploads)
        #expect(submitted.status == 0, "\(submitted.stderr)")
        let ids = jobs.compactMap { $0["id"] }
        let worker = try Worker(database: server.url, cdn: cdn, uploads: uploads, name: "restart", extra: ["--jobs", "2", "--lease", "10"])
        try Daemon.wait(timeout: 60, "a job to be running") {
            (try? server.sql("SELECT count(*) FROM ingestd_jobs WHERE state = 'running'")).flatMap(Int.init) ?? 0 > 0
        }
        try server.restartImmediately()
        try Daemon.wait(timeout: 300, "every job to end after the restart") { (try? counts(server)) == ["published": ids.count] }
        #expect(worker.process.isRunning, "the worker survived the restart")
        try expectPublishedExactlyOnce(server, cdn: cdn, ids: ids)
        // SIGTERM: the worker stops cleanly.
        kill(worker.pid, SIGTERM)
        worker.process.waitUntilExit()
        #expect(worker.process.terminationStatus == 0, "\(worker.output.suffix(2000))")
    }

    /// `watch --database --jobs 0`: the spool daemon feeds the queue and runs nothing itself. An
    /// upload that arrives while PostgreSQL is down waits in `queued/` and is queued once it is
    /// back; a worker elsewhere publishes the good ones and rejects the broken one.
    @Test func spoolDaemonFeedsTheQueueAndSurvivesAnOutage() throws {
        let server = try PostgresServer(name: "producer")
        let base = Paths.scratch("fleet-producer")
        try? FileManager.default.removeItem(atPath: base)
        let (spool, cdn) = ("\(base)/spool", "\(base)/cdn")
        let daemon = try Daemon(spool: spool, cdn: cdn, extra: ["--database", server.url, "--jobs", "0"])
        try Daemon.wait(timeout: 30, "the daemon to start") { Daemon.events(spool).contains { $0["event"] as? String == "started" } }
        try Daemon.drop(Paths.sample("landscape_60fps.mp4"), into: spool, as: "first.mp4")
        try Daemon.wait(timeout: 30, "the first upload to be queued") { (try? server.sql("SELECT count(*) FROM ingestd_jobs")) == "1" }

        try server.stop()
        try Daemon.drop(Paths.sample("hdr_hlg.mp4"), into: spool, as: "during-outage.mp4")
        try Daemon.drop(Paths.sample("broken_truncated.mp4"), into: spool, as: "broken.mp4")
        try Daemon.wait(timeout: 30, "both to wait in queued/") {
            Daemon.entries("\(spool)/queued").filter { !FileManager.default.fileExists(atPath: "\(spool)/queued/\($0)/enqueued") }.count == 2
        }
        try server.start()
        let worker = try Worker(database: server.url, cdn: cdn, uploads: spool, name: "producer")
        // The daemon marks an upload `enqueued` after its row is committed: wait for the marks too.
        try Daemon.wait(timeout: 120, "every job to end, each marked queued") {
            (try? counts(server)) == ["published": 2, "rejected": 1]
                && Daemon.entries("\(spool)/queued").filter { FileManager.default.fileExists(atPath: "\(spool)/queued/\($0)/enqueued") }.count == 3
        }
        #expect(daemon.process.isRunning && worker.process.isRunning)

        let queued = Daemon.entries("\(spool)/queued")
        #expect(queued.count == 3 && queued.allSatisfy { FileManager.default.fileExists(atPath: "\(spool)/queued/\($0)/enqueued") })
        #expect(Daemon.entries("\(spool)/incoming").isEmpty && Daemon.entries("\(spool)/work").isEmpty, "nothing left behind")
        let rejected = try server.sql("SELECT id || ' ' || (reason->>'code') FROM ingestd_jobs WHERE state = 'rejected'")
        #expect(rejected.hasPrefix("broken-") && rejected.hasSuffix(" corrupt_input"), "\(rejected)")
        let published = try server.sql("SELECT id FROM ingestd_jobs WHERE state = 'published' ORDER BY id").split(separator: "\n").map(String.init)
        #expect(Daemon.entries(cdn) == published, "only published jobs in the CDN: \(Daemon.entries(cdn))")
        for id in published {
            let manifest = try JSONDecoder().decode(ReadyManifest.self, from: Data(contentsOf: URL(fileURLWithPath: "\(cdn)/\(id)/manifest.json")))
            let source = try Tool.ffprobe(["-show_entries", "format=duration", Paths.sample(id.hasPrefix("first") ? "landscape_60fps.mp4" : "hdr_hlg.mp4")])
            #expect(abs(manifest.durationSeconds - ((source["format"] as? [String: Any])?.double("duration") ?? 0)) < 0.1, "\(id)")
        }
    }

    @Test func workersSendSignedWebhooksRecordedWithEachJobsEnd() throws {
        let server = try PostgresServer(name: "hooks")
        let base = Paths.scratch("fleet-hooks")
        try? FileManager.default.removeItem(atPath: base)
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        let secret = WebhookReceiver.makeSecret()
        try WebhookReceiver.writeSecret(secret, to: "\(base)/webhook.secret")
        let receiver = try WebhookReceiver(secret: secret, mode: .refuseFirst, directory: "\(base)/receiver")
        let cdn = "\(base)/cdn"
        let hooks = ["--webhook", receiver.url, "--webhook-secret-file", "\(base)/webhook.secret", "--webhook-schedule", "0,1,1"]
        let (uploads, paths) = try stage(["noaudio_odd.webm", "broken_truncated.mp4"], in: base)
        let workers = try (0..<2).map { try Worker(database: server.url, cdn: cdn, uploads: uploads, name: "hooks-\($0)", extra: hooks) }
        let (result, jobs) = try submit(server.url, paths, uploads: uploads)
        #expect(result.status == 0 && jobs.count == 2, "\(result.stderr)")
        // Every first delivery is refused; the retry (by whichever worker reserves it) is accepted.
        // An event is recorded delivered only after the receiver answered: wait for the rows too.
        try Daemon.wait(timeout: 120, "the three events accepted and recorded delivered") {
            Set(receiver.deliveries.filter { $0.status == 204 }.map(\.id)).count == 3
                && (try? server.sql("SELECT count(*) FROM ingestd_webhooks WHERE state = 'delivered'")) == "3"
        }
        let deliveries = receiver.deliveries
        #expect(deliveries.allSatisfy { $0.verified }, "every signature verifies")
        for id in Set(deliveries.map(\.id)) {
            #expect(deliveries.filter { $0.id == id }.map(\.status) == [503, 204], "\(id): sent by one sender at a time")
        }
        let accepted = Dictionary(uniqueKeysWithValues: deliveries.filter { $0.status == 204 }.compactMap { d in d.type.map { ($0, d.data) } })
        let published = try #require(accepted["upload.published"])
        let master = try #require(published["master"] as? String)
        #expect(FileManager.default.fileExists(atPath: "\(cdn)/\(master)"), "\(master)")
        #expect((accepted["upload.rejected"]?["reason"] as? [String: Any])?["code"] as? String == "corrupt_input")
        // Played while it was made: playable first, recorded with the job's events in order.
        let job = try #require(published["id"] as? String)
        let playable = try #require(accepted["upload.playable"])
        #expect(playable["id"] as? String == job && playable["master"] as? String == "\(job)/master.m3u8", "\(playable)")
        #expect((playable["playableAfterSeconds"] as? Double ?? -1) >= 0)
        let events = try server.sql("SELECT string_agg(event, ' ' ORDER BY at) FROM ingestd_job_events WHERE job_id = '\(job)' AND event IN ('playable', 'published')")
        #expect(events == "playable published", "\(events)")
        let status = try Tool.run(Paths.binary, ["status", "--database", server.url, "--json"])
        let webhooks = (try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])?["webhooks"] as? [String: Any]
        #expect(webhooks?["delivered"] as? Int == 3 && webhooks?["pending"] as? Int == 0, "\(status.stdout)")
        _ = workers
    }
}
