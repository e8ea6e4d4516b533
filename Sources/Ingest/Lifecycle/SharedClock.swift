import Foundation
import Synchronization

/// The time everything shared is stamped with: this host's clock corrected by the offset last
/// measured to the job store's (the database's `now()`, which also times every lease). A host
/// whose clock is off still signs webhooks a receiver accepts (Standard Webhooks refuses
/// timestamps more than 5 minutes away) and schedules retries the other hosts see as due.
public final class SharedClock: Sendable {
    private let offset = Mutex<Double>(0)

    public init() {}

    /// Now, on the shared clock.
    public func now() -> Date { Date().addingTimeInterval(offsetSeconds) }

    /// The store's clock minus this host's, in seconds (0 until measured, and for the spool).
    public var offsetSeconds: Double { offset.withLock { $0 } }

    func set(offsetSeconds seconds: Double) { offset.withLock { $0 = seconds } }
}
