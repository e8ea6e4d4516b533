import Foundation
@testable import Ingest
import IngestdTesting
import Logging
import ServiceLifecycle
import Testing
import Webhooks

/// Two daemons on one spool share its outbox (#29 item 11): two real senders deliver 40 events
/// to a real receiver, each event exactly once (a sender reserves an event with an `flock`
/// before sending it).
struct OutboxSharingTests {
    @Test func twoSendersOnOneOutboxNeverSendAnEventTwice() async throws {
        let base = Paths.scratch("outbox-shared")
        try? FileManager.default.removeItem(atPath: base)
        let secret = WebhookReceiver.makeSecret()
        let receiver = try WebhookReceiver(secret: secret, directory: "\(base)/receiver")
        let outbox = Outbox(root: "\(base)/outbox")
        try outbox.create()
        let ids = (0..<40).map { "job-\($0)" }
        for id in ids { try outbox.record(UploadEvent.published(job: id, manifest: Data("{}".utf8))) }
        let key = Array(Data(base64Encoded: String(secret.dropFirst("whsec_".count)))!)
        var logger = Logger(label: "test")
        logger.logLevel = .error
        // Two Outbox values on one directory, as two processes would have.
        let senders = (0..<2).map { _ in
            WebhookSender(endpoint: WebhookEndpoint(url: receiver.url, secret: WebhookSecret(key: key), concurrency: 8),
                          outbox: Outbox(root: "\(base)/outbox"), logger: logger)
        }
        let group = ServiceGroup(configuration: .init(services: senders, logger: logger))
        let run = Task { try await group.run() }
        try await waitFor("every event delivered", timeout: .seconds(60)) { outbox.count(.delivered) == 40 }
        try await Task.sleep(for: .seconds(1))  // a duplicate would arrive by now
        await group.triggerGracefulShutdown()
        try await run.value
        let delivered = receiver.deliveries.filter(\.verified).map(\.id)
        #expect(delivered.count == 40, "each event sent once: \(delivered.count) deliveries for 40 events")
        #expect(Set(delivered).count == 40)
        #expect(!Daemon.entries("\(base)/outbox/pending").contains { $0.hasSuffix(".json") })
    }
}
