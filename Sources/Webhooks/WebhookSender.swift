import AsyncHTTPClient
import Foundation
import Ingest
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle

/// Where and how events are delivered.
public struct WebhookEndpoint: Sendable {
    public var url: String
    public var secret: WebhookSecret
    /// Delay before each attempt after the first, in seconds (the first attempt is immediate, so
    /// the first entry is 0 by convention); after the last attempt the event is dead.
    public var schedule: [Double]
    /// Limit of one attempt (connect, send, answer).
    public var timeoutSeconds: Double
    /// Attempts in flight at once.
    public var concurrency: Int

    /// The Standard Webhooks reference schedule: immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h.
    public static let standardSchedule: [Double] = [0, 5, 300, 1800, 7200, 18000, 36000, 36000]

    public init(url: String, secret: WebhookSecret, schedule: [Double] = standardSchedule, timeoutSeconds: Double = 15,
                concurrency: Int = 8) {
        self.url = url
        self.secret = secret
        self.schedule = schedule
        self.timeoutSeconds = timeoutSeconds
        self.concurrency = concurrency
    }
}

/// Delivers an outbox's pending events (the spool's ``Outbox`` or the fleet's table) to one
/// endpoint, at least once: an event stops being pending only on a 2xx answer, or as dead once
/// the schedule is spent. Deliveries run on
/// their own tasks and HTTP client, never in a job's way; on shutdown, attempts in flight are
/// abandoned and made again at the next start.
public actor WebhookSender: Service {
    private let endpoint: WebhookEndpoint
    private let outbox: any OutboxStore
    private let logger: Logger
    private let clock: SharedClock
    private var inFlight: Set<String> = []
    private var wake: AsyncStream<Void>.Continuation?

    /// `clock`: what timestamps and schedules are made with (the worker's, corrected to the
    /// database's clock in a fleet).
    public init(endpoint: WebhookEndpoint, outbox: any OutboxStore, clock: SharedClock = SharedClock(), logger: Logger) {
        self.endpoint = endpoint
        self.outbox = outbox
        self.clock = clock
        self.logger = logger.with(["endpoint": "\(endpoint.url)"])
    }

    public func run() async throws {
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
        // The deadline of `execute` covers the answer's head only: the read timeout bounds a
        // receiver that answers and then stalls in the body.
        configuration.timeout = .init(connect: .seconds(5), read: .milliseconds(Int64(endpoint.timeoutSeconds * 1000)))
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let (wakeups, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        self.wake = wake
        // A new event in a watched outbox wakes the sender at once; the ticker makes retries
        // (and events in a shared table) come due.
        let watcher = outbox.watchedDirectory.map { DirectoryWatcher(directory: $0) { wake.yield() } }
        let ticker = Task {
            while !Task.isCancelled {
                wake.yield()
                try? await SteadyTimer.sleep(for: .milliseconds(watcher == nil ? 1000 : 500))
            }
        }
        let reserve = Duration.seconds(endpoint.timeoutSeconds + 30)
        // Delivered events are kept a week (for `ingestd status` and a receiver's questions), then dropped.
        let pruner = Task { [outbox, clock, logger] in
            while !Task.isCancelled {
                do {
                    let dropped = try await outbox.prune(deliveredBefore: clock.now().addingTimeInterval(-Self.keepDelivered))
                    if dropped > 0 { logger.info("delivered webhook events pruned", metadata: ["count": "\(dropped)"]) }
                } catch {
                    logger.warning("cannot prune delivered webhook events", metadata: ["error": "\(error)"])
                }
                try? await SteadyTimer.sleep(for: .seconds(3600))
            }
        }
        await withTaskGroup(of: Void.self) { group in
            await withGracefulShutdownHandler {
                // Not before the clock is the store's: a first try signed with this host's own
                // time (10 minutes off) would be refused by the receiver.
                for await _ in wakeups.cancelOnGracefulShutdown() where inFlight.count < endpoint.concurrency && clock.isMeasured {
                    let due: [OutboxEvent]
                    watcher?.forgetAll()  // only wake-ups matter here, not the names it saw
                    // Measured again before each batch is signed: a host whose clock was just
                    // stepped signs with the store's time, not its own.
                    if let offset = try? await outbox.clockOffset() { clock.set(offsetSeconds: offset) }
                    do {
                        due = try await outbox.due(limit: endpoint.concurrency - inFlight.count, excluding: inFlight, reserve: reserve)
                    } catch {
                        logger.warning("cannot read the webhook outbox", metadata: ["error": "\(error)"])
                        continue
                    }
                    for event in due where !inFlight.contains(event.id) {
                        inFlight.insert(event.id)
                        group.addTask { await self.deliver(event, with: client) }
                    }
                }
            } onGracefulShutdown: {
                wake.finish()
            }
            group.cancelAll()
        }
        ticker.cancel()
        pruner.cancel()
        watcher?.stop()
        try? await client.shutdown()
    }

    /// How long delivered events are kept: 7 days.
    public static let keepDelivered: TimeInterval = 7 * 86_400

    private func deliver(_ initial: OutboxEvent, with client: HTTPClient) async {
        var event = initial
        defer {
            inFlight.remove(event.id)
            wake?.yield()
        }
        let started = ContinuousClock.now
        let failure = await attempt(event, with: client)
        guard !Task.isCancelled else { return }  // shutting down: the next start tries again
        event.attempts += 1
        let log = logger.with(["event": "\(event.id)", "type": "\(event.type)", "attempt": "\(event.attempts)"])
        do {
            if let failure {
                event.lastError = failure
                if event.attempts >= endpoint.schedule.count {
                    try await outbox.dead(event)
                    log.error("webhook undeliverable; kept in outbox/dead", metadata: ["error": "\(failure)"])
                } else {
                    let delay = endpoint.schedule[event.attempts]
                    event.nextAttemptAt = clock.now().addingTimeInterval(delay)
                    try await outbox.retry(event)
                    log.warning("webhook attempt failed; will retry", metadata: ["error": "\(failure)", "in": "\(delay)"])
                }
            } else {
                event.deliveredAt = clock.now()
                try await outbox.delivered(event)
                let latency = event.deliveredAt!.timeIntervalSince(event.createdAt)
                log.info("webhook delivered", metadata: ["seconds": "\((ContinuousClock.now - started).seconds)",
                                                          "sinceEvent": "\(String(format: "%.3f", latency))"])
            }
        } catch {
            log.error("cannot update the webhook outbox", metadata: ["error": "\(error)"])
        }
    }

    /// One POST; nil when the receiver answered 2xx, else why not.
    private func attempt(_ event: OutboxEvent, with client: HTTPClient) async -> String? {
        let timestamp = Int(clock.now().timeIntervalSince1970)
        var request = HTTPClientRequest(url: endpoint.url)
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/json")
        request.headers.add(name: "user-agent", value: "ingestd-webhooks")
        request.headers.add(name: "webhook-id", value: event.id)
        request.headers.add(name: "webhook-timestamp", value: "\(timestamp)")
        request.headers.add(name: "webhook-signature",
                            value: WebhookSignature.sign(id: event.id, timestamp: timestamp, body: event.body, secret: endpoint.secret))
        request.body = .bytes(ByteBuffer(string: event.body))
        do {
            let response = try await client.execute(request, timeout: .milliseconds(Int64(endpoint.timeoutSeconds * 1000)))
            _ = try? await response.body.collect(upTo: 64 * 1024)
            return (200..<300).contains(response.status.code) ? nil : "HTTP \(response.status.code)"
        } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout {
            return "timed out after \(endpoint.timeoutSeconds) s"
        } catch {
            return Self.describe(error)
        }
    }

    private static func describe(_ error: any Error) -> String {
        let text = String(describing: error)
        if text.contains("connectTimeout") { return "connect timed out" }
        if text.lowercased().contains("connection refused") || text.contains("ECONNREFUSED") { return "connection refused" }
        return text
    }
}
