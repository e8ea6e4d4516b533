import IngestdTesting
import Foundation
import Testing

/// Fleet workers whose wall clock is off the database's (`faketime`, the monotonic clock left
/// true, as on a host whose NTP is off or was stepped): each publishes within seconds, shares
/// leases with a correct worker, and stamps every webhook request (first tries included) with
/// the database's time, so a strict receiver (5 minutes of tolerance) accepts each.
@Suite(.serialized, .offTheSharedPool, .enabled(if: Tool.exists("faketime"), "faketime is not installed"))
struct ClockFaultTests {
    /// A database, a webhook receiver, an uploads root with copies of a sample, and workers.
    struct Fleet {
        let server: PostgresServer
        let receiver: WebhookReceiver
        let base: String
        var cdn: String { "\(base)/cdn" }

        init(_ name: String) throws {
            server = try PostgresServer(name: name)
            base = Paths.scratch(name)
            try? FileManager.default.removeItem(atPath: base)
            try FileManager.default.createDirectory(atPath: "\(base)/cdn", withIntermediateDirectories: true)
            _ = FileManager.default.createFile(atPath: "\(base)/.ingestd-uploads", contents: nil)  // as `submit` leaves it
            let secret = WebhookReceiver.makeSecret()
            try WebhookReceiver.writeSecret(secret, to: "\(base)/secret")
            receiver = try WebhookReceiver(secret: secret, directory: "\(base)/receiver")
        }

        /// A worker under `launcher` (or none); ready (`/readyz` 200) when this returns.
        func worker(_ name: String, launcher: [String] = []) throws -> (WorkerProcess, http: Int) {
            let http = try PostgresServer.freePort()
            let launch = launcher.isEmpty ? [] : ["/usr/bin/env"] + launcher
            let worker = try WorkerProcess(["worker", "--database", server.url, "--cdn", cdn, "--uploads", base, "--jobs", "1", "--poll", "0.5",
                                            "--lease", "10", "--webhook", receiver.url, "--webhook-secret-file", "\(base)/secret",
                                            "--http", "127.0.0.1:\(http)"],
                                           log: "\(base)/\(name).log", launcher: launch)
            try Daemon.wait(timeout: 120, "\(name) to be ready") { DatabaseFaultTests.ready(http) == 200 }
            return (worker, http)
        }

        func submit(_ name: String, sample: String = "landscape_60fps.mp4") throws -> String {
            try FileManager.default.copyItem(atPath: Paths.sample(sample), toPath: "\(base)/\(name)")
            return try DatabaseFaultTests.submit(server.url, "\(base)/\(name)")
        }

        /// Waits for `id`'s `upload.published` webhook (its `upload.playable` comes first); the
        /// seconds from `since`.
        func delivered(_ id: String, since: Date) throws -> Double {
            try Daemon.wait(timeout: 300, "\(id)'s webhook") {
                receiver.deliveries.contains { $0.data["id"] as? String == id && $0.type == "upload.published" && $0.status / 100 == 2 }
            }
            return Date().timeIntervalSince(since)
        }

        /// Every request the receiver got was signed with a timestamp within a minute of now
        /// (the database's clock, this host's) and accepted.
        func expectEveryRequestStampedWithTheDatabasesTime(_ context: String) {
            let deliveries = receiver.deliveries
            #expect(!deliveries.isEmpty)
            for delivery in deliveries {
                let stamped = (delivery.body["timestamp"] as? String).flatMap { ISO8601DateFormatter().date(from: $0) }
                #expect(delivery.verified && delivery.status / 100 == 2, "\(context): \(delivery.status) \(delivery.body)")
                #expect(stamped.map { abs($0.timeIntervalSinceNow) < 60 } == true, "\(context): stamped \(String(describing: stamped))")
            }
        }

        func state(_ id: String) throws -> String { try server.sql("SELECT state || ' ' || coalesce(worker, '') FROM ingestd_jobs WHERE id = '\(id)'") }
    }

    static func faketime(_ offset: String) -> [String] { ["FAKETIME_DONT_FAKE_MONOTONIC=1", "/usr/bin/faketime", "-f", offset] }

    /// Alone, 10 minutes behind or ahead: the job publishes and its webhook arrives in seconds
    /// (behind, each of the worker's timed waits once lasted 10 minutes more).
    @Test(arguments: ["-10m", "+10m"]) func aWorkerWhoseClockIsOffPublishesAndDeliversInSeconds(_ offset: String) throws {
        let fleet = try Fleet("clock-alone\(offset)")
        let (worker, http) = try fleet.worker("worker", launcher: Self.faketime(offset))
        let submitted = Date()
        let id = try fleet.submit("clip.mp4", sample: "upload/clip1.mp4")
        let took = try fleet.delivered(id, since: submitted)
        print("clock \(offset): published and delivered \(took) s after submit")
        #expect(try fleet.state(id).hasPrefix("published"))
        #expect(took < 180, "well under the clock's offset (600 s): \(took) s")
        fleet.expectEveryRequestStampedWithTheDatabasesTime(offset)
        let metrics = try Tool.run("curl", ["-s", "http://127.0.0.1:\(http)/metrics"]).stdout
        let measured = metrics.split(separator: "\n").first { $0.hasPrefix("ingestd_clock_offset_seconds ") }.flatMap { Double($0.split(separator: " ")[1]) }
        let expected = offset.hasPrefix("-") ? 600.0 : -600.0
        #expect(measured.map { abs($0 - expected) < 5 } == true, "offset exported: \(measured ?? .nan)")
        let log = try String(contentsOfFile: "\(fleet.base)/worker.log", encoding: .utf8)
        #expect(log.contains("clock disagrees with the database"))
        _ = worker
    }

    /// A worker 10 minutes behind beside a correct one, sharing the queue's leases: each takes
    /// a job, both publish and deliver, each job exactly once.
    @Test func aWorkerBehindAndACorrectOneShareTheQueue() throws {
        let fleet = try Fleet("clock-pair")
        let (behind, _) = try fleet.worker("behind", launcher: Self.faketime("-10m"))
        let (correct, _) = try fleet.worker("correct")
        let submitted = Date()
        let ids = try ["one.mp4", "two.mp4"].map { try fleet.submit($0) }
        for id in ids { _ = try fleet.delivered(id, since: submitted) }
        let holders = try ids.map { try fleet.state($0) }
        #expect(holders.allSatisfy { $0.hasPrefix("published") }, "\(holders)")
        #expect(Set(holders).count == 2, "one job each (both were ready and idle): \(holders)")
        #expect(try fleet.server.sql("SELECT count(*) FROM ingestd_job_events WHERE event = 'published'") == "2", "each published once")
        fleet.expectEveryRequestStampedWithTheDatabasesTime("pair")
        _ = (behind, correct)
    }

    /// The wall clock stepped back 10 minutes while a job runs (libfaketime reading its offset
    /// from a file on every call): the job still publishes and its webhook arrives.
    @Test func aClockSteppedBackMidJobDoesNotStallIt() throws {
        let fleet = try Fleet("clock-step")
        let offsetFile = "\(fleet.base)/offset"
        try Data("+0\n".utf8).write(to: URL(fileURLWithPath: offsetFile))
        // The faketime command (which sets up libfaketime as it needs), then FAKETIME unset so the
        // library reads the file instead, on every call.
        let (worker, _) = try fleet.worker("worker", launcher: Self.faketime("+0") + [
            "/usr/bin/env", "-u", "FAKETIME", "FAKETIME_TIMESTAMP_FILE=\(offsetFile)", "FAKETIME_NO_CACHE=1",
        ])
        let id = try fleet.submit("long.mp4", sample: "portrait_rotated.mp4")
        try Daemon.wait(timeout: 60, "the job in flight") { !Daemon.children(of: worker.pid).isEmpty }
        let stepped = Date()
        try Data("-10m\n".utf8).write(to: URL(fileURLWithPath: offsetFile))
        let took = try fleet.delivered(id, since: stepped)
        print("clock stepped back mid-job: delivered \(took) s later")
        #expect(try fleet.state(id).hasPrefix("published"))
        #expect(took < 180, "well under the step (600 s): \(took) s")
        fleet.expectEveryRequestStampedWithTheDatabasesTime("stepped")
        _ = worker
    }
}
