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
            try? await Task.sleep(for: limit)
            if first.claim() { continuation.resume(returning: nil) }
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
