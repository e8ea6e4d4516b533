import Foundation
import Synchronization

/// The worker's waits: deadlines on the monotonic clock, each woken by a relative timeout
/// (`poll(2)`) on a thread of its own, never by an absolute timer.
///
/// Swift's `Task.sleep` and Dispatch's `asyncAfter` arm absolute `timerfd` deadlines. Whatever
/// moves those (libfaketime 0.9.10 shifts every absolute deadline by its offset, the monotonic
/// clock's too, even with `FAKETIME_DONT_FAKE_MONOTONIC=1`) stalls every wait of a worker whose
/// wall clock is behind: a clock 10 minutes slow made each 100 ms poll of the job process last
/// 10 minutes, and a clock ahead made every sleep spin. A relative timeout counts elapsed
/// time, whatever any clock says.
public enum SteadyTimer {
    /// Returns once `duration` has passed on the monotonic clock; throws `CancellationError`
    /// (at once) when the task is cancelled.
    public static func sleep(for duration: Duration) async throws {
        try await Wheel.shared.sleep(until: ContinuousClock.now + duration, cancellable: true)
    }

    /// Like ``sleep(for:)``, but never cut short: for loops that must keep their pace while
    /// cancelled (a job process asked to stop is still waited for).
    public static func pause(for duration: Duration) async {
        try? await Wheel.shared.sleep(until: ContinuousClock.now + duration, cancellable: false)
    }
}

/// One thread holding every pending wake-up, sleeping in `poll` until the nearest (or until a
/// new one arrives through its pipe).
private final class Wheel: Sendable {
    static let shared = Wheel()

    private struct Sleeper {
        var deadline: ContinuousClock.Instant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private let sleepers = Mutex<[UInt64: Sleeper]>([:])
    private let nextID = Atomic<UInt64>(0)
    private let wakeRead: Int32
    private let wakeWrite: Int32

    private init() {
        var fds: [Int32] = [0, 0]
        precondition(pipe(&fds) == 0, "pipe: \(String(cString: strerror(errno)))")
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, O_NONBLOCK)
        }
        (wakeRead, wakeWrite) = (fds[0], fds[1])
        let thread = Thread { [self] in run() }
        thread.name = "steady timer"
        thread.start()
    }

    func sleep(until deadline: ContinuousClock.Instant, cancellable: Bool) async throws {
        let id = nextID.add(1, ordering: .relaxed).newValue
        let wait = {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                self.sleepers.withLock { $0[id] = Sleeper(deadline: deadline, continuation: continuation) }
                // Registered first, then checked: a cancellation between the two finds it.
                if cancellable, Task.isCancelled, let sleeper = self.sleepers.withLock({ $0.removeValue(forKey: id) }) {
                    sleeper.continuation.resume(throwing: CancellationError())
                    return
                }
                self.wake()
            }
        }
        guard cancellable else { return try await wait() }
        try await withTaskCancellationHandler(operation: wait) {
            sleepers.withLock { $0.removeValue(forKey: id) }?.continuation.resume(throwing: CancellationError())
        }
    }

    private func wake() {
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)  // a full pipe already holds a wake-up
    }

    private func run() {
        var drain = [UInt8](repeating: 0, count: 64)
        while true {
            let now = ContinuousClock.now
            let (due, nearest) = sleepers.withLock { sleepers -> ([Sleeper], ContinuousClock.Instant?) in
                let due = sleepers.filter { $0.value.deadline <= now }
                for id in due.keys { sleepers.removeValue(forKey: id) }
                return (Array(due.values), sleepers.values.map(\.deadline).min())
            }
            for sleeper in due { sleeper.continuation.resume() }
            // Rounded up to the next millisecond: woken early, the loop would only spin.
            let timeout = nearest.map { deadline -> Int32 in
                let (seconds, attoseconds) = now.duration(to: deadline).components
                return Int32(clamping: seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
            } ?? -1
            var descriptor = pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)
            if poll(&descriptor, 1, timeout) > 0 { _ = read(wakeRead, &drain, drain.count) }
        }
    }
}
