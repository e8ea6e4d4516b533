import Foundation

/// Runs `body` and returns its value, or nil when `limit` passes first (in running time, see
/// ``StallTolerantClock``); `body` is then cancelled and left to finish on its own: the caller
/// never waits for it, even when it ignores cancellation (a client library's continuation that
/// is never resumed, a call on a silent network). Cancelling the caller cancels `body` and
/// returns at once with `CancellationError`.
public func withinDeadline<T: Sendable>(_ limit: Duration, _ body: @escaping @Sendable () async throws -> T) async throws -> T? {
    let race = DeadlineRace<T?>()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T?, any Error>) in
            race.start(continuation,
                       work: Task(executorPreference: PreferredExecutor.current) {
                           do {
                               race.finish(.success(try await body()))
                           } catch {
                               race.finish(.failure(error))
                           }
                       },
                       timer: Task(executorPreference: PreferredExecutor.current) {
                           try? await StallTolerantClock.sleep(for: limit)
                           if !Task.isCancelled { race.finish(.success(nil)) }
                       })
        }
    } onCancel: {
        race.finish(.failure(CancellationError()))
    }
}

/// The executor a caller keeps its work on, for the tasks made on its behalf: child tasks inherit
/// a task executor preference, unstructured ones (``withinDeadline``'s body and timer) do not, so
/// they ask here. Nil (Swift's shared pool) unless a caller chose one with ``run(on:_:)`` — the
/// tests do, so that their blocking tools cannot stall a database call's answer.
public enum PreferredExecutor {
    @TaskLocal public static var current: (any TaskExecutor)?

    /// Runs `body`, its child tasks and the deadlines under it on `executor`.
    public static func run<T: Sendable>(on executor: any TaskExecutor, _ body: @Sendable () async throws -> T) async throws -> T {
        try await $current.withValue(executor) {
            try await withTaskExecutorPreference(executor) { try await body() }
        }
    }
}

/// Whichever ends first of a body, its timer and the caller's cancellation resumes the caller,
/// once; the others are cancelled.
private final class DeadlineRace<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<T, any Error>?
    private var result: Result<T, any Error>?
    private var tasks: [Task<Void, Never>] = []

    func start(_ continuation: CheckedContinuation<T, any Error>, work: Task<Void, Never>, timer: Task<Void, Never>) {
        lock.lock()
        if let result {  // ended before it started (cancelled already)
            lock.unlock()
            work.cancel()
            timer.cancel()
            continuation.resume(with: result)
            return
        }
        self.continuation = continuation
        tasks = [work, timer]
        lock.unlock()
    }

    func finish(_ outcome: Result<T, any Error>) {
        lock.lock()
        guard result == nil else { lock.unlock(); return }
        result = outcome
        let (waiting, running) = (continuation, tasks)
        continuation = nil
        lock.unlock()
        for task in running { task.cancel() }
        waiting?.resume(with: outcome)
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
            try await SteadyTimer.sleep(for: nap)
            left -= min(start.duration(to: clock.now), nap + stallCredit)
        }
    }
}
