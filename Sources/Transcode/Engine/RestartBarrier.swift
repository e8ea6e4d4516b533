import Foundation

/// Makes the AV1 rungs of one pipeline restart their encoders together, with no SVT-AV1 encoder
/// at work meanwhile.
///
/// SVT-AV1 1.4 keeps process globals that no lock guards: the CPU topology (`lp_group`), which
/// every encoder's init fills from /proc/cpuinfo and every teardown frees and sets to NULL, and
/// tables each init rewrites. Encoders opened one after another before any frame is sent are
/// safe (the pipeline's start); restarts on the rungs' own threads were not: now and then (once
/// in CI, once in ~140 loaded runs here) a hot job died of a NULL read in `libSvtAv1Enc.so.1.4.1`
/// (+0x23c1be: a 1025-int `lp_group` record off a global pointer) on a thread opening a restarted
/// 720p encoder, while another rung freed its own. `Benchmarks/hot/svt_race.c` reproduces it
/// outside ingestd: 4 threads opening and freeing encoders crashed 9 runs of 25 at that address,
/// and none of 25 with open and free serialised.
/// So at a restart each rung drains its encoder and waits for the others; then, one rung at a
/// time, every old encoder is freed; then, one at a time, every new one is opened; and only when
/// all are open does any rung send its next frame. At the end each rung frees its encoder alone
/// too (``alone(_:)``), on its own thread, rather than wherever its last reference goes. (Two
/// pipelines with AV1 rungs in one process would race the same way; ingestd runs each job in a
/// process of its own.)
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
    private let exclusive = NSLock()

    init(parties: Int) {
        self.parties = parties
    }

    /// Runs one restart: `drain` (every party at once), then `free` and `open`, each with
    /// no other party's encoder at work or being made.
    func restart(drain: () throws -> Void, free: () -> Void, open: () throws -> Void) throws {
        do {
            try drain()
            try wait()
            alone(free)
            try wait()
            try exclusive.withLock(open)
            try wait()
        } catch {
            breakAll(error)
            throw error
        }
    }

    /// Runs `body` (a rung's last free of its encoder, when its thread ends) with no other party
    /// freeing or opening one.
    func alone(_ body: () -> Void) {
        exclusive.withLock(body)
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
