import Foundation

/// The webhook outbox for `ingestd status`: counts, and the events not delivered yet.
public struct OutboxStatus: Codable, Sendable {
    public struct Entry: Codable, Sendable {
        public var id: String
        public var type: String
        public var attempts: Int
        /// Nil for a dead event.
        public var nextAttemptAt: Date?
        public var lastError: String?

        public init(id: String, type: String, attempts: Int, nextAttemptAt: Date?, lastError: String?) {
            self.id = id
            self.type = type
            self.attempts = attempts
            self.nextAttemptAt = nextAttemptAt
            self.lastError = lastError
        }
    }

    public var pending: Int
    public var delivered: Int
    public var dead: Int
    /// Pending events, next due first, then dead ones, with their last error.
    public var undelivered: [Entry]

    public init(pending: Int, delivered: Int, dead: Int, undelivered: [Entry]) {
        self.pending = pending
        self.delivered = delivered
        self.dead = dead
        self.undelivered = undelivered
    }

    /// Nil when the spool has no outbox (no daemon ran with `--webhook`).
    public init?(_ outbox: Outbox, listed: Int = 20) {
        guard FileManager.default.fileExists(atPath: outbox.root) else { return nil }
        pending = outbox.count(.pending)
        delivered = outbox.count(.delivered)
        dead = outbox.count(.dead)
        let waiting = outbox.undelivered().map { Entry(id: $0.id, type: $0.type, attempts: $0.attempts, nextAttemptAt: $0.nextAttemptAt, lastError: $0.lastError) }
        let failed = outbox.events(in: .dead).sorted { $0.createdAt > $1.createdAt }
            .map { Entry(id: $0.id, type: $0.type, attempts: $0.attempts, nextAttemptAt: nil, lastError: $0.lastError) }
        undelivered = Array((waiting + failed).prefix(listed))
    }
}
