import Foundation

/// Runs `body` and returns its value, or nil when `limit` passes first; `body` is then left to
/// finish on its own. For calls that may wait on an unreachable service for much longer than
/// the caller can (a connection pool retrying until its circuit breaker trips).
func withinDeadline<T: Sendable>(_ limit: Duration, _ body: @escaping @Sendable () async throws -> T) async throws -> T? {
    let first = FirstCome()
    return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T?, any Error>) in
        Task {
            do {
                let value = try await body()
                if first.claim() { continuation.resume(returning: value) }
            } catch {
                if first.claim() { continuation.resume(throwing: error) }
            }
        }
        Task {
            try? await StallTolerantClock.sleep(for: limit)
            if first.claim() { continuation.resume(returning: nil) }
        }
    }
}

/// Waits that count only the time in which this process could run. A wake-up more than a
/// second later than asked for means the process itself was stalled (every thread of Swift's
/// pool busy in blocking work, the process stopped, the host frozen); whatever it waits for was
/// stalled as well (the database's answer may be sitting unread), so such a stall counts as one
/// second, not as its length. Ordinary lateness on a busy host counts in full.
public enum StallTolerantClock {
    static let step = Duration.milliseconds(250)
    static let stallCredit = Duration.seconds(1)

    /// Returns once `limit` of running time has passed.
    public static func sleep(for limit: Duration) async throws {
        let clock = ContinuousClock()
        var left = limit
        while left > .zero {
            let nap = min(step, left)
            let start = clock.now
            try await Task.sleep(for: nap)
            left -= min(start.duration(to: clock.now), nap + stallCredit)
        }
    }
}

/// True for the first caller of ``claim()`` only.
private final class FirstCome: @unchecked Sendable {
    private let lock = NSLock()
    private var taken = false

    func claim() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard !taken else { return false }
        taken = true
        return true
    }
}
