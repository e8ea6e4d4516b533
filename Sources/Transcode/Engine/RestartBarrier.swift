import Foundation

/// Makes the AV1 rungs of one pipeline restart their encoders together, with no SVT-AV1 encoder
/// at work meanwhile.
///
/// SVT-AV1 1.4 keeps tables in process globals: every encoder's init rewrites them while other
/// encoders' threads read them, and its teardown releases shared state. Encoders opened one
/// after another before any frame is sent are safe (the pipeline's start); a restart beside
/// encoders at work is not: about one hot job in twenty crashed (SIGSEGV) on 2 loaded cores.
/// So at a restart each rung drains its encoder and waits for the others; then, one rung at a
/// time, every old encoder is freed; then, one at a time, every new one is opened; and only when
/// all are open does any rung send its next frame. (Upstream guards these tables from 2.x on.)
///
/// Every rung of one pipeline's AV1 ladder gets the same frames and restarts at the same ones
/// (``TranscodePlan/isKeyframe(frame:)``), so every party arrives. A party that fails, or a
/// rung that is abandoned, breaks the barrier: the others stop waiting and fail with its error.
final class RestartBarrier: @unchecked Sendable {
    private let condition = NSCondition()
    private let parties: Int
    private var arrived = 0
    private var generation = 0
    private var broken: Error?
    /// One rung at a time frees or opens its encoder.
    private let alone = NSLock()

    init(parties: Int) {
        self.parties = parties
    }

    /// Runs one restart: `drain` (each party alone, at once), then `free` and `open` each with
    /// no other party's encoder at work or being made.
    func restart(drain: () throws -> Void, free: () -> Void, open: () throws -> Void) throws {
        do {
            try drain()
            try wait()
            alone.withLock(free)
            try wait()
            try alone.withLock(open)
            try wait()
        } catch {
            breakAll(error)
            throw error
        }
    }

    /// Wakes every waiting party, which then throws `error`; later restarts throw it at once.
    func breakAll(_ error: Error) {
        condition.lock()
        if broken == nil { broken = error }
        condition.broadcast()
        condition.unlock()
    }

    private func wait() throws {
        condition.lock()
        defer { condition.unlock() }
        if let broken { throw broken }
        let current = generation
        arrived += 1
        if arrived == parties {
            arrived = 0
            generation += 1
            condition.broadcast()
            return
        }
        while generation == current && broken == nil { condition.wait() }
        if generation == current, let broken { throw broken }
    }
}
