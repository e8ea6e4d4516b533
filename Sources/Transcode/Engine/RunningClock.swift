import Foundation

/// Time this process has run since it started measuring: monotonic time less the spans it was
/// stopped (`SIGSTOP`: a worker keeping another video ahead of its viewers, see the daemon's
/// margin guard), which a ticker thread sees as gaps of over a second between its 100 ms ticks.
/// The playable gate measures its speed on it: a job that waited is judged by how fast it
/// encodes while it runs, not by its wait.
final class RunningClock: @unchecked Sendable {
    private let lock = NSLock()
    private let started = ContinuousClock.now
    private var lastTick = ContinuousClock.now
    private var stopped = Duration.zero
    private var running = true
    static let tick = Duration.milliseconds(100)
    static let gap = Duration.seconds(1)

    init() {
        let thread = Thread { [weak self] in
            while let clock = self, clock.tick() {
                Thread.sleep(forTimeInterval: Self.tick.seconds)
            }
        }
        thread.name = "ingestd-running-clock"
        thread.start()
    }

    deinit { stop() }

    /// Ends the ticker.
    func stop() {
        lock.lock()
        running = false
        lock.unlock()
    }

    /// Seconds run so far (a stop under way, not yet ticked, is left out too).
    var elapsed: Double {
        lock.lock()
        defer { lock.unlock() }
        let now = ContinuousClock.now
        return ((now - started) - stopped - Self.excess(now - lastTick)).seconds
    }

    private func tick() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        let now = ContinuousClock.now
        stopped += Self.excess(now - lastTick)
        lastTick = now
        return running
    }

    /// The part of a gap between ticks that was a stop.
    private static func excess(_ gap: Duration) -> Duration { gap > Self.gap ? gap - tick : .zero }
}
