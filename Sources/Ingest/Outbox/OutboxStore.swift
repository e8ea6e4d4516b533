import Foundation
import Transcode

/// Where a webhook sender finds events and records its attempts: the spool's ``Outbox``
/// directory, or the fleet's table beside the job queue.
public protocol OutboxStore: Sendable {
    /// Up to `limit` pending events due by now, none of `excluding` (attempts in flight here). A
    /// store shared by several senders reserves them for `reserve` so the others skip them.
    func due(limit: Int, excluding: Set<String>, reserve: Duration) async throws -> [OutboxEvent]
    /// A failed attempt: the event stays pending until `event.nextAttemptAt`.
    func retry(_ event: OutboxEvent) async throws
    /// The receiver answered 2xx.
    func delivered(_ event: OutboxEvent) async throws
    /// The schedule is spent: kept with its last error, never sent again.
    func dead(_ event: OutboxEvent) async throws
    /// Drops delivered events older than `cutoff`; returns how many.
    func prune(deliveredBefore cutoff: Date) async throws -> Int
    /// A directory whose changes announce new events (watched with inotify), if any.
    var watchedDirectory: String? { get }
    /// The store's clock minus this host's, in seconds, measured now; nil for a store on this
    /// host (its clock is the one).
    func clockOffset() async throws -> Double?
}

extension OutboxStore {
    public func clockOffset() async throws -> Double? { nil }
}

extension Outbox: OutboxStore {
    public func due(limit: Int, excluding: Set<String>, reserve: Duration) async throws -> [OutboxEvent] {
        self.reserve(limit: limit, excluding: excluding, stale: reserve.seconds)
    }

    public func retry(_ event: OutboxEvent) async throws { try update(event) }
    public func delivered(_ event: OutboxEvent) async throws { try settle(event, as: .delivered) }
    public func dead(_ event: OutboxEvent) async throws { try settle(event, as: .dead) }
    public var watchedDirectory: String? { directory(.pending) }
}
