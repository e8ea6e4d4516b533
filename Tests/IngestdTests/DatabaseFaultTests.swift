import Fleet
import Foundation
import Ingest
import IngestdTesting
import Logging
import PostgresNIO
import Synchronization
import Testing

/// The database's faults made for real (#29 items 4 and 5): a network path that goes silent
/// (a TCP proxy the test controls), a COMMIT the server refuses for longer than a lease (a
/// deferred trigger). Real PostgreSQL, real worker processes, real files.
@Suite(.serialized, .enabled(if: PostgresServer.binaries != nil, "PostgreSQL is not installed"))
struct DatabaseFaultTests {
    /// `/readyz`'s status code, 0 when nothing answers.
    static func ready(_ port: Int) -> Int {
        let result = try? Tool.run("curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "2", "http://127.0.0.1:\(port)/readyz"])
        return Int(result?.stdout ?? "") ?? 0
    }

    static func elapsed(since start: Date) -> Double { (Date().timeIntervalSince(start) * 10).rounded() / 10 }

    /// `ingestd submit --json` of one file; its job id.
    static func submit(_ database: String, _ path: String) throws -> String {
        let uploads = (path as NSString).deletingLastPathComponent
        let result = try Tool.run(Paths.binary, ["submit", "--json", "--database", database, "--uploads", uploads, path])
        let jobs = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]]
        return try #require(jobs?.first?["id"] as? String, "submit: \(result.stderr)")
    }

    /// Every session gets the statement, lock and idle-in-transaction timeouts and the server's
    /// TCP keepalives, so a worker the network lost never holds a row lock for long.
    @Test(.offTheSharedPool) func everySessionCarriesTheTimeouts() async throws {
        let server = try PostgresServer(name: "session")
        var logger = Logger(label: "test")
        logger.logLevel = .error
        let settings = try await DatabaseURL(server.url).withClient(logger: logger) { [logger] client in
            var values: [String] = []
            for name in ["statement_timeout", "lock_timeout", "idle_in_transaction_session_timeout", "tcp_keepalives_idle", "application_name"] {
                let rows = try await client.query(PostgresQuery(unsafeSQL: "SHOW \(name)"), logger: logger)
                for try await value in rows.decode(String.self) { values.append(value) }
            }
            return values
        }
        #expect(settings == ["30s", "10s", "30s", "30", "ingestd"])
        _ = server
    }

    /// A job failed by its lease (its worker died on the last attempt) is announced by the webhook
    /// made in SQL with the upload's own id, as every other end is (#29 item 11).
    @Test(.offTheSharedPool) func aJobFailedByItsLeaseIsAnnouncedWithItsUploadID() async throws {
        let server = try PostgresServer(name: "rescue-hook")
        let base = Paths.scratch("rescue-hook")
        try? FileManager.default.removeItem(atPath: base)
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        let upload = "\(base)/upload"
        try FileManager.default.copyItem(atPath: Paths.sample("upload"), toPath: upload)
        var logger = Logger(label: "test")
        logger.logLevel = .error
        let body = try await DatabaseURL(server.url).withClient(logger: logger) { [logger] client -> String in
            _ = try await QueueSchema.migrate(client, logger: logger)
            let queue = JobQueue(client: client, logger: logger, timeout: .seconds(60))
            try await queue.enqueue([.init(id: "dir-1", input: .path(upload), uploadID: Upload.declaredID(of: .path(upload)), preset: "{}")])
            #expect(try await queue.claim(worker: "gone", lease: .seconds(1))?.id == "dir-1")
            try await Task.sleep(for: .seconds(2))
            #expect(try await queue.rescueExpiredLeases(maxAttempts: 1, webhooks: true).map(\.id) == ["dir-1"])
            let rows = try await client.query("SELECT body FROM ingestd_webhooks WHERE job_id = 'dir-1'", logger: logger)
            for try await body in rows.decode(String.self) { return body }
            return ""
        }
        let event = try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any], "\(body)")
        let data = try #require(event["data"] as? [String: Any])
        #expect(event["type"] as? String == "upload.failed" && data["uploadId"] as? String == "sample-upload-1", "\(body)")
        #expect((data["reason"] as? [String: Any])?["code"] as? String == "lease_expired")
        _ = server
    }

    /// Old events go by age (#29 item 11): job events past 30 days with the workers' hourly
    /// upkeep, delivered webhooks past 7 days; newer ones stay.
    @Test(.offTheSharedPool) func oldEventsAndDeliveredWebhooksArePruned() async throws {
        let server = try PostgresServer(name: "prune")
        var logger = Logger(label: "test")
        logger.logLevel = .error
        let left = try await DatabaseURL(server.url).withClient(logger: logger) { [logger] client -> [Int] in
            _ = try await QueueSchema.migrate(client, logger: logger)
            let queue = JobQueue(client: client, logger: logger, timeout: .seconds(60))
            try await queue.enqueue([.init(id: "old-1", input: .path("/dev/null"), preset: "{}")])
            try await client.query("""
                INSERT INTO ingestd_job_events (job_id, at, event) VALUES ('old-1', now() - interval '31 days', 'attempt'),
                                                                          ('old-1', now() - interval '29 days', 'attempt')
                """, logger: logger)
            try await client.query("""
                INSERT INTO ingestd_webhooks (id, job_id, type, body, state, delivered_at)
                VALUES ('msg_a', 'old-1', 'upload.failed', '{}', 'delivered', now() - interval '8 days'),
                       ('msg_b', 'old-1', 'upload.failed', '{}', 'delivered', now() - interval '6 days'),
                       ('msg_c', 'old-1', 'upload.failed', '{}', 'dead', NULL)
                """, logger: logger)
            let store = PostgresStore(queue: queue, worker: "w", lease: .seconds(30), maxAttempts: 3, webhooks: true)
            _ = try await store.rescue(now: Date())
            let dropped = try await QueueOutbox(client: client, logger: logger).prune(deliveredBefore: Date().addingTimeInterval(-7 * 86_400))
            #expect(dropped == 1)
            var counts: [Int] = []
            for sql: PostgresQuery in ["SELECT count(*)::bigint FROM ingestd_job_events WHERE at < now() - interval '30 days'",
                                       "SELECT count(*)::bigint FROM ingestd_job_events", "SELECT count(*)::bigint FROM ingestd_webhooks"] {
                for try await count in try await client.query(sql, logger: logger).decode(Int64.self) { counts.append(Int(count)) }
            }
            return counts
        }
        // The 31-day-old event went; the 29-day-old one and the queueing event stay; msg_b and the dead one stay.
        #expect(left == [0, 2, 2], "\(left)")
        _ = server
    }

    /// A process whose own threads are all busy (blocking work on every thread of Swift's pool)
    /// for longer than a call's deadline does not blame the database: the answer that arrived
    /// meanwhile is read, the call succeeds. (Seen in CI: a loaded test process gave up a claim
    /// PostgreSQL had answered.)
    @Test func aStalledProcessDoesNotBlameTheDatabase() async throws {
        let server = try PostgresServer(name: "stalled")
        var logger = Logger(label: "test")
        logger.logLevel = .error
        let stall = 6.0, limit = Duration.seconds(2)
        let answer = try await DatabaseURL(server.url).withClient(logger: logger) { [logger] client in
            async let call = client.withConnection(within: limit) { connection in
                let rows = try await connection.query("SELECT 42 FROM pg_sleep(0.2)", logger: logger)
                var values: [Int] = []
                for try await value in rows.decode(Int.self) { values.append(value) }
                return values
            }
            try await Task.sleep(for: .milliseconds(50))
            // Every thread of the pool blocked (the pool has one per core), as a test's blocking
            // tool runs do.
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<ProcessInfo.processInfo.activeProcessorCount {
                    group.addTask {
                        let until = Date().addingTimeInterval(stall)
                        while Date() < until { usleep(10_000) }
                    }
                }
            }
            return try await call
        }
        #expect(answer == [42])
        _ = server
    }

    /// A session the server ended while its client was stalled (idle in transaction past the
    /// server's limit, as under a test machine's load in CI): the call ends within its deadline,
    /// however the client library takes the dead connection.
    @Test(.offTheSharedPool) func aSessionTheServerEndedFailsWithinTheDeadline() async throws {
        let server = try PostgresServer(name: "ended")
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let started = ContinuousClock.now
        await #expect(throws: (any Error).self) {
            try await DatabaseURL(server.url).withClient(logger: logger) { [logger] client in
                try await client.withTransaction(within: .seconds(5), logger: logger) { connection in
                    try await connection.query("SET LOCAL idle_in_transaction_session_timeout = '500ms'", logger: logger)
                    try await Task.sleep(for: .seconds(2))  // the server ends the session meanwhile
                    try await connection.query("SELECT 1", logger: logger)
                }
            }
        }
        let took = started.duration(to: .now)
        print("ended session: the call failed after \(took)")
        #expect(took < .seconds(120), "failed after \(took)")  // 5 s when the process is not stalled
        _ = server
    }

    /// A path to PostgreSQL that goes silent (no reset) with a job in flight: the worker reports
    /// not ready, stops the job and abandons its staging before its lease could pass to anyone
    /// else, leaves alone what another worker publishes meanwhile, and is ready and claiming
    /// again by itself once the path heals.
    @Test(.offTheSharedPool) func aSilentNetworkMakesTheWorkerNotReadyUntilItHeals() throws {
        let server = try PostgresServer(name: "silent")
        let proxy = try TCPProxy(target: server.port)
        let base = Paths.scratch("silent")
        try? FileManager.default.removeItem(atPath: base)
        let cdn = "\(base)/cdn", uploads = "\(base)/uploads"
        for directory in [cdn, uploads] { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) }
        // A short job, kept in flight when the path goes silent by stopping its process (SIGSTOP):
        // however fast the host, it is still running when the worker lets it go.
        let made = try Tool.run("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc2=size=360x640:rate=30:duration=20",
                                           "-f", "lavfi", "-i", "sine=frequency=440:duration=20", "-c:v", "libx264", "-preset", "ultrafast",
                                           "-crf", "32", "-c:a", "aac", "-shortest", "\(uploads)/one.mp4"])
        #expect(made.status == 0, "\(made.stderr)")
        try FileManager.default.copyItem(atPath: Paths.sample("landscape_60fps.mp4"), toPath: "\(uploads)/two.mp4")
        func state(_ id: String) -> String { (try? server.sql("SELECT state || ' ' || coalesce(worker, '') FROM ingestd_jobs WHERE id = '\(id)'")) ?? "" }
        _ = FileManager.default.createFile(atPath: "\(uploads)/.ingestd-uploads", contents: nil)  // as `submit` leaves it
        let http = try PostgresServer.freePort()
        let viaProxy = "postgres://ingestd@127.0.0.1:\(proxy.port)/ingestd"
        let first = try WorkerProcess(["worker", "--database", viaProxy, "--cdn", cdn, "--uploads", uploads, "--jobs", "1", "--poll", "0.5", "--lease", "16",
                                       "--database-timeout", "2", "--http", "127.0.0.1:\(http)"], log: "\(base)/first.log")
        try Daemon.wait(timeout: 60, "the worker to be ready") { Self.ready(http) == 200 }
        let one = try Self.submit(server.url, "\(uploads)/one.mp4")
        kill(try Daemon.jobProcess(of: first.pid, timeout: 60), SIGSTOP)

        proxy.drop()
        let silent = Date()
        try Daemon.wait(timeout: 30, "not ready") { Self.ready(http) == 503 }
        let notReady = Self.elapsed(since: silent)
        try Daemon.wait(timeout: 30, "the job process to be stopped") { Daemon.children(of: first.pid).isEmpty }
        let stopped = Self.elapsed(since: silent)
        // Half a lease (8 s) without a renewal, then the stop: a lease long enough that a loaded
        // host's scheduling cannot carry it past the point another worker may take the job.
        #expect(stopped < 16, "the job is let go before its lease (16 s) can pass to another worker: \(stopped) s")
        // Removed once the worker has reaped the job process, which /proc stops listing first.
        try Daemon.wait(timeout: 30, "the abandoned attempt's staging removed") {
            !Daemon.entries(cdn).contains { $0.hasPrefix(".\(one).staging-") }
                && !Daemon.entries("\(cdn)/\(one)").contains { AttemptVersion.token(of: $0) != nil }  // its growing version
        }

        // Meanwhile another worker (on a good path) rescues the job once its lease ran out and publishes it.
        let second = try WorkerProcess(["worker", "--database", server.url, "--cdn", cdn, "--uploads", uploads, "--jobs", "1", "--poll", "0.5",
                                        "--lease", "16"],
                                       log: "\(base)/second.log")
        try Daemon.wait(timeout: 120, "job one published by the second worker") { state(one) == "published \(ProcessInfo.processInfo.hostName)/\(second.pid)" }
        let published = try FileManager.default.attributesOfItem(atPath: "\(cdn)/\(one)/manifest.json")
        kill(second.pid, SIGTERM)
        try Daemon.wait(timeout: 60, "the second worker to stop") { !second.process.isRunning }

        proxy.forward()
        let healed = Date()
        try Daemon.wait(timeout: 60, "ready again") { Self.ready(http) == 200 }
        let readyAgain = Self.elapsed(since: healed)
        let two = try Self.submit(server.url, "\(uploads)/two.mp4")
        try Daemon.wait(timeout: 120, "job two published by the first worker") { state(two) == "published \(ProcessInfo.processInfo.hostName)/\(first.pid)" }

        let after = try FileManager.default.attributesOfItem(atPath: "\(cdn)/\(one)/manifest.json")
        #expect(after[.systemFileNumber] as? Int == published[.systemFileNumber] as? Int, "job one's output is the second worker's")
        #expect(try server.sql("SELECT count(*) FROM ingestd_job_events WHERE job_id = '\(one)' AND event = 'published'") == "1")
        print("silent network: not ready after \(notReady) s, job stopped after \(stopped) s; healed: ready after \(readyAgain) s")
    }

    /// A COMMIT the server refuses (a deferred trigger) for longer than the lease: whatever the
    /// worker renamed into the CDN inside the refused transaction is withdrawn, so the CDN never
    /// keeps a job the database does not call published; once commits pass, it publishes once.
    @Test(.offTheSharedPool) func aRefusedCommitLeavesNothingInView() throws {
        let server = try PostgresServer(name: "commit")
        let base = Paths.scratch("commit")
        try? FileManager.default.removeItem(atPath: base)
        let cdn = "\(base)/cdn"
        try FileManager.default.createDirectory(atPath: cdn, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Paths.sample("landscape_60fps.mp4"), toPath: "\(base)/clip.mp4")
        let id = try Self.submit(server.url, "\(base)/clip.mp4")
        _ = try server.sql("""
            CREATE FUNCTION test_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN IF NEW.state = 'published' THEN RAISE EXCEPTION 'the test refuses this commit'; END IF; RETURN NEW; END $$;
            CREATE CONSTRAINT TRIGGER test_refuse AFTER UPDATE ON ingestd_jobs DEFERRABLE INITIALLY DEFERRED
                FOR EACH ROW EXECUTE FUNCTION test_refuse();
            """)
        let worker = try WorkerProcess(["worker", "--database", server.url, "--cdn", cdn, "--uploads", base, "--jobs", "1", "--poll", "0.5",
                                        "--lease", "4",
                                        "--max-attempts", "20", "--backoff", "0.2"], log: "\(base)/worker.log")
        func refusals() -> Int {
            let log = (try? String(contentsOfFile: "\(server.directory)/server.log", encoding: .utf8)) ?? ""
            return log.components(separatedBy: "the test refuses this commit").count - 1
        }
        try Daemon.wait(timeout: 120, "commits refused for longer than the lease") { refusals() >= 3 }
        // After each refused commit the output leaves the CDN again (how long it stayed depends
        // on how busy the host is: each refusal is waited for, not sampled against a clock).
        for _ in 0..<2 {
            let seen = refusals()
            try Daemon.wait(timeout: 120, "another refused commit") { refusals() > seen }
            try Daemon.wait(timeout: 60, "the refused attempt's output withdrawn") { !FileManager.default.fileExists(atPath: "\(cdn)/\(id)/master.m3u8") }
        }
        #expect(try server.sql("SELECT state FROM ingestd_jobs") != "published")

        _ = try server.sql("DROP TRIGGER test_refuse ON ingestd_jobs")
        try Daemon.wait(timeout: 120, "published once the commits pass") { (try? server.sql("SELECT state FROM ingestd_jobs")) == "published" }
        #expect(FileManager.default.fileExists(atPath: "\(cdn)/\(id)/master.m3u8"))
        #expect(try server.sql("SELECT count(*) FROM ingestd_job_events WHERE event = 'published'") == "1")
        let duration = try Tool.ffprobe(["-show_entries", "format=duration", "\(cdn)/\(id)/master.m3u8"])
        #expect(((duration["format"] as? [String: Any])?["duration"] as? String).flatMap(Double.init).map { $0 > 1 } == true)
        _ = worker
    }

    /// The database refuses an end's values for good (a data exception, SQLSTATE class 22):
    /// the job ends `failed` with the database's words after one try, and is never left
    /// `running` to burn its attempts; nothing of it is in view.
    @Test(.offTheSharedPool) func aPermanentRefusalEndsTheJobFailed() throws {
        let server = try PostgresServer(name: "refusal")
        let base = Paths.scratch("refusal")
        try? FileManager.default.removeItem(atPath: base)
        let cdn = "\(base)/cdn"
        try FileManager.default.createDirectory(atPath: cdn, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Paths.sample("noaudio_odd.webm"), toPath: "\(base)/clip.webm")
        let id = try Self.submit(server.url, "\(base)/clip.webm")
        _ = try server.sql("""
            CREATE FUNCTION test_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN IF NEW.state = 'published' THEN RAISE EXCEPTION 'the test cannot store this manifest' USING ERRCODE = '22023'; END IF;
            RETURN NEW; END $$;
            CREATE TRIGGER test_refuse BEFORE UPDATE ON ingestd_jobs FOR EACH ROW EXECUTE FUNCTION test_refuse();
            """)
        let worker = try WorkerProcess(["worker", "--database", server.url, "--cdn", cdn, "--uploads", base, "--jobs", "1", "--poll", "0.5",
                                        "--lease", "6"], log: "\(base)/worker.log")
        try Daemon.wait(timeout: 60, "the job to end") { (try? server.sql("SELECT state FROM ingestd_jobs")) == "failed" }
        let reason = try server.sql("SELECT (reason->>'code') || ' ' || (reason->>'message') || ' ' || attempts FROM ingestd_jobs")
        #expect(reason.hasPrefix("store_refused ") && reason.contains("the test cannot store this manifest") && reason.hasSuffix(" 1"), "\(reason)")
        #expect(!Daemon.entries(cdn).contains { $0.hasPrefix(id) || $0.hasPrefix(".\(id)") }, "\(Daemon.entries(cdn))")
        _ = worker
    }

    /// The database goes away: the worker retries with capped exponential backoff and jitter,
    /// one log line per step (the connection pool's own lines stay out of the log), and picks
    /// up work by itself once the database is back.
    @Test(.offTheSharedPool) func anUnreachableDatabaseIsRetriedWithBackoffOneLinePerStep() throws {
        let server = try PostgresServer(name: "backoff")
        let base = Paths.scratch("backoff")
        try? FileManager.default.removeItem(atPath: base)
        let cdn = "\(base)/cdn"
        try FileManager.default.createDirectory(atPath: cdn, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: "\(base)/.ingestd-uploads", contents: nil)
        try FileManager.default.copyItem(atPath: Paths.sample("noaudio_odd.webm"), toPath: "\(base)/clip.webm")
        let worker = try WorkerProcess(["worker", "--database", server.url, "--cdn", cdn, "--uploads", base, "--jobs", "1", "--poll", "0.2",
                                        "--database-timeout", "1"], log: "\(base)/worker.log")
        func log() -> String { (try? String(contentsOfFile: "\(base)/worker.log", encoding: .utf8)) ?? "" }
        try Daemon.wait(timeout: 30, "the worker to start") { log().contains("worker started") }
        // "worker started" comes before the schema is made (one transaction, given 60 s, not the
        // 1 s of a queue call): stopping the server during it would test that limit instead.
        try Daemon.wait(timeout: 60, "the worker's schema") { (try? server.sql("SELECT count(*) FROM ingestd_schema")).map { $0 != "0" } ?? false }
        try server.stop()
        // Each step: a call that fails within --database-timeout (1 s), then 0.5, 1, 2, 4 s (± 20 %):
        // one line per step, each naming a longer wait than the last (one per poll would not grow).
        func waits() -> [Double] {
            log().split(separator: "\n").filter { $0.contains("job store unreachable; retrying") }.compactMap { line in
                line.firstMatch(of: /inSeconds=([0-9.]+)/).flatMap { Double($0.1) }
            }
        }
        try Daemon.wait(timeout: 120, "four backoff steps") { waits().count >= 4 }
        let first = Array(waits().prefix(4))
        #expect(zip(first, first.dropFirst()).allSatisfy { $1 > $0 * 1.3 }, "each step waits longer: \(first)")
        #expect(first[0] < 1.5, "the first step is short: \(first)")
        #expect(!log().split(separator: "\n").contains { $0.contains("[PostgresNIO]") }, "the pool's own lines stay out")
        try server.start()
        try Daemon.wait(timeout: 60, "reachable again") { log().contains("job store reachable again") }
        let id = try Self.submit(server.url, "\(base)/clip.webm")
        try Daemon.wait(timeout: 60, "the job published") { (try? server.sql("SELECT state FROM ingestd_jobs WHERE id = '\(id)'")) == "published" }
        _ = worker
    }

    /// A queued upload whose `upload.json` carries U+0000 (a row another producer wrote: `submit`
    /// refuses it) is rejected once, by field, by the worker: before the fix its end could not
    /// be recorded (jsonb refuses U+0000, SQLSTATE 22P05) and it burnt its attempts (#29 item 3).
    @Test(.offTheSharedPool) func aNULInAQueuedUploadIsRejectedByFieldOnce() throws {
        let server = try PostgresServer(name: "nul-row")
        let base = Paths.scratch("nul-row")
        try? FileManager.default.removeItem(atPath: base)
        let cdn = "\(base)/cdn", upload = "\(base)/nul"
        try FileManager.default.createDirectory(atPath: cdn, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Paths.sample("upload"), toPath: upload)
        try FileManager.default.copyItem(atPath: Paths.sample("noaudio_odd.webm"), toPath: "\(base)/fine.webm")
        let fine = try Self.submit(server.url, "\(base)/fine.webm")  // migrates, leaves the marker
        let manifest = try String(contentsOfFile: "\(upload)/upload.json", encoding: .utf8)
            .replacingOccurrences(of: "three clips and a song", with: "three clips\\u0000and a song")
        try Data(manifest.utf8).write(to: URL(fileURLWithPath: "\(upload)/upload.json"))
        let refused = try Tool.run(Paths.binary, ["submit", "--database", server.url, "--uploads", base, upload])
        #expect(refused.status != 0 && refused.stderr.contains("metadata.caption"), "\(refused.stderr)")
        _ = try server.sql("""
            INSERT INTO ingestd_jobs (id, state, input, input_kind, preset)
            SELECT 'nul', 'queued', '\(upload)', 'path', preset FROM ingestd_jobs WHERE id = '\(fine)'
            """)
        let worker = try WorkerProcess(["worker", "--database", server.url, "--cdn", cdn, "--uploads", base, "--jobs", "1", "--poll", "0.5",
                                        "--backoff", "0.2"], log: "\(base)/worker.log")
        try Daemon.wait(timeout: 120, "both jobs to end") {
            (try? server.sql("SELECT count(*) FROM ingestd_jobs WHERE state IN ('queued', 'running')")) == "0"
        }
        let row = try server.sql("SELECT state || ' ' || attempts || ' ' || (reason->>'code') || ' ' || (reason->>'message') FROM ingestd_jobs WHERE id = 'nul'")
        #expect(row.hasPrefix("rejected 1 bad_upload ") && row.contains("metadata.caption") && row.contains("U+0000"), "\(row)")
        #expect(try server.sql("SELECT state FROM ingestd_jobs WHERE id = '\(fine)'") == "published")
        _ = worker
    }

    /// A database that refuses the worker itself (here: no such database, SQLSTATE 3D000) is a
    /// configuration error no retry fixes: the worker says so and exits 69, rather than waiting.
    @Test(.offTheSharedPool) func aWorkerTheDatabaseRefusesStops() throws {
        let server = try PostgresServer(name: "refuses")
        let base = Paths.scratch("refuses")
        try? FileManager.default.removeItem(atPath: base)
        try FileManager.default.createDirectory(atPath: "\(base)/cdn", withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: "\(base)/.ingestd-uploads", contents: nil)
        let url = server.url.replacingOccurrences(of: "/ingestd", with: "/nosuchdb", options: .backwards)
        let started = Date()
        let worker = try WorkerProcess(["worker", "--database", url, "--cdn", "\(base)/cdn", "--uploads", base, "--poll", "0.2"],
                                       log: "\(base)/worker.log")
        try Daemon.wait(timeout: 60, "the worker to stop") { !worker.process.isRunning }
        let said = (try? String(contentsOfFile: "\(base)/worker.log", encoding: .utf8)) ?? ""
        #expect(worker.process.terminationStatus == 69 && said.contains("nosuchdb") && said.contains("does not exist"),
                "exit \(worker.process.terminationStatus) after \(Self.elapsed(since: started)) s: \(said)")
    }

    /// A worker started while its database is down starts anyway (#29 item 10): not ready,
    /// one line per backoff step, SIGTERM honoured at once; and one whose database comes up
    /// later takes its jobs by itself. (Before: `prepare` ran before the shutdown handler and
    /// the worker exited after its five connection tries.)
    @Test(.offTheSharedPool) func aWorkerStartedWithoutItsDatabaseWaitsForIt() throws {
        let server = try PostgresServer(name: "late-db")
        try server.stop()
        let base = Paths.scratch("late-db")
        try? FileManager.default.removeItem(atPath: base)
        let cdn = "\(base)/cdn"
        try FileManager.default.createDirectory(atPath: cdn, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: "\(base)/.ingestd-uploads", contents: nil)
        try FileManager.default.copyItem(atPath: Paths.sample("noaudio_odd.webm"), toPath: "\(base)/clip.webm")
        func arguments(_ http: Int) -> [String] {
            ["worker", "--database", server.url, "--cdn", cdn, "--uploads", base, "--jobs", "1", "--poll", "0.2", "--database-timeout", "1",
             "--grace", "5", "--http", "127.0.0.1:\(http)"]
        }
        // SIGTERM while the database was never reached: honoured at once, exit 0.
        let first = try PostgresServer.freePort()
        let stopped = try WorkerProcess(arguments(first), log: "\(base)/stopped.log")
        try Daemon.wait(timeout: 60, "a backoff step") {
            ((try? String(contentsOfFile: "\(base)/stopped.log", encoding: .utf8)) ?? "").contains("job store unreachable")
        }
        try Daemon.wait(timeout: 30, "not ready") { Self.ready(first) == 503 }
        let stopping = Date()
        kill(stopped.process.processIdentifier, SIGTERM)
        try Daemon.wait(timeout: 60, "the worker to exit") { !stopped.process.isRunning }
        let took = Self.elapsed(since: stopping)
        // Under a second alone; what must never happen is waiting out the backoff or the grace.
        #expect(stopped.process.terminationStatus == 0 && took < 30, "SIGTERM before the database was reached: exit \(stopped.process.terminationStatus) after \(took) s")

        // The database comes up late: the worker was waiting, becomes ready and takes the job.
        let second = try PostgresServer.freePort()
        let log = "\(base)/worker.log"
        let worker = try WorkerProcess(arguments(second), log: log)
        func said() -> String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }
        try Daemon.wait(timeout: 60, "two backoff steps") { said().components(separatedBy: "job store unreachable").count > 2 }
        #expect(worker.process.isRunning, "the worker keeps waiting for its database: \(said())")
        try Daemon.wait(timeout: 30, "not ready") { Self.ready(second) == 503 }
        try server.start()
        try Daemon.wait(timeout: 60, "reachable") { said().contains("job store reachable again") }
        try Daemon.wait(timeout: 30, "ready") { Self.ready(second) == 200 }
        let id = try Self.submit(server.url, "\(base)/clip.webm")
        try Daemon.wait(timeout: 120, "the job published") { (try? server.sql("SELECT state FROM ingestd_jobs WHERE id = '\(id)'")) == "published" }
        // The worker's pool is bounded (#29 item 11): --jobs 1 + 4 at most, LISTEN among them.
        let sessions = Int(try server.sql("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'ingestd'")) ?? 99
        let listening = Int(try server.sql("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'ingestd' AND query ILIKE 'LISTEN%'")) ?? 0
        #expect(sessions <= 5 && listening == 1, "sessions \(sessions), listening \(listening)")
    }
}

/// The deadline itself (Ingest's `withinDeadline`, under every database call). The wall-clock
/// bounds are loose: under the full suite this process's threads can be busy in other tests'
/// blocking tools for tens of seconds; what matters is that the caller returns at all (the
/// task-group version never did).
@Suite(.timeLimit(.minutes(3)))
struct DeadlineTests {
    /// A body that never ends and ignores cancellation (a continuation nobody resumes) does not
    /// hold its caller past the limit.
    @Test func aBodyThatNeverEndsDoesNotHoldTheCaller() async throws {
        let started = ContinuousClock.now
        let answer: Int? = try await withinDeadline(.milliseconds(500)) {
            await withCheckedContinuation { (_: CheckedContinuation<Void, Never>) in }
            return 1
        }
        #expect(answer == nil)
        #expect(started.duration(to: .now) < .seconds(120))
    }

    /// A deadline's body runs on its caller's preferred executor (unstructured tasks do not inherit
    /// it): with every thread of Swift's pool blocked, a caller kept off the pool is not stalled.
    // The pool stays blocked until the body has returned (or a 60 s guard): a body that needed
    // the pool could only return after the guard let go, however busy the host.
    @Test func theBodyRunsWhereItsCallerPrefers() async throws {
        final class Flag: Sendable {
            private let value = Mutex(false)
            var isSet: Bool { value.withLock { $0 } }
            func set() { value.withLock { $0 = true } }
        }
        let returned = Flag(), guardReleased = Flag()
        try await PreferredExecutor.run(on: DispatchTaskExecutor.shared) {
            for _ in 0..<ProcessInfo.processInfo.activeProcessorCount {
                Task.detached {
                    let until = Date().addingTimeInterval(60)
                    while !returned.isSet {
                        guard Date() < until else { guardReleased.set(); return }
                        usleep(10_000)
                    }
                }
            }
            defer { returned.set() }
            try await Task.sleep(for: .milliseconds(100))
            let answer: Int? = try await withinDeadline(.seconds(120)) {
                try await Task.sleep(for: .milliseconds(100))
                return 7
            }
            let waited = guardReleased.isSet
            #expect(answer == 7)
            #expect(!waited, "the body waited for the blocked pool")
        }
    }

    @Test func cancellingTheCallerReturnsAtOnce() async throws {
        let task = Task {
            try await withinDeadline(.seconds(60)) {
                await withCheckedContinuation { (_: CheckedContinuation<Void, Never>) in }
                return 1
            }
        }
        try await Task.sleep(for: .milliseconds(200))
        let started = ContinuousClock.now
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(started.duration(to: .now) < .seconds(120))
    }
}
