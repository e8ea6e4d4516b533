import Foundation
import Synchronization

/// The time everything shared is stamped with: this host's clock corrected by the offset last
/// measured to the job store's (the database's `now()`, which also times every lease). A host
/// whose clock is off still signs webhooks a receiver accepts (Standard Webhooks refuses
/// timestamps more than 5 minutes away) and schedules retries the other hosts see as due.
public final class SharedClock: Sendable {
    private let offset: Mutex<Double?>

    /// `measured: false` for a clock the worker corrects to its store's (a fleet's): until the
    /// first measurement it is not ``isMeasured``, and nothing shared should be stamped with it.
    public init(measured: Bool = true) { offset = Mutex(measured ? 0 : nil) }

    /// Now, on the shared clock.
    public func now() -> Date { Date().addingTimeInterval(offsetSeconds) }

    /// The store's clock minus this host's, in seconds (0 until measured, and for the spool).
    public var offsetSeconds: Double { offset.withLock { $0 ?? 0 } }

    /// Whether ``now()`` is the store's time yet (always, for a clock that needs no measuring).
    public var isMeasured: Bool { offset.withLock { $0 != nil } }

    /// The store's clock minus this host's, as just measured.
    public func set(offsetSeconds seconds: Double) { offset.withLock { $0 = seconds } }
}
