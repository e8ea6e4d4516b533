import Foundation
import Synchronization
import Testing
@testable import Transcode

/// ``RestartBarrier`` on real threads: SVT-AV1 1.4 crashed when one encoder's init ran beside
/// another's teardown (a NULL `lp_group` read in `svt 720p`), so no free may overlap an open, or
/// another free or open, and no rung may go on before every rung has its new encoder.
@Suite struct RestartBarrierTests {
    /// What the parties did, in order, and how many were inside a free or open at once.
    final class Log: Sendable {
        let steps = Mutex<[String]>([])
        let inside = Atomic<Int>(0)
        let overlapped = Atomic<Bool>(false)

        func record(_ step: String) { steps.withLock { $0.append(step) } }

        /// Runs `step` as a free or open: counts who else is inside meanwhile.
        func alone(_ step: String) {
            if inside.add(1, ordering: .sequentiallyConsistent).newValue > 1 { overlapped.store(true, ordering: .sequentiallyConsistent) }
            usleep(2_000)  // long enough for an unguarded second party to walk in
            record(step)
            inside.subtract(1, ordering: .sequentiallyConsistent)
        }
    }

    /// Runs `body(party)` on `count` threads and waits for all of them.
    static func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
        let group = DispatchGroup()
        for party in 0..<count {
            group.enter()
            Thread {
                body(party)
                group.leave()
            }.start()
        }
        group.wait()
    }

    @Test func everyDrainComesFirstThenEachFreeThenEachOpenOneAtATimeAndEachLastFreeAlone() {
        let barrier = RestartBarrier(parties: 4)
        let log = Log()
        for round in 0..<3 {
            Self.onThreads(4) { party in
                usleep(UInt32(party * 3_000))  // arrive unevenly
                try? barrier.restart(drain: { log.record("drain") },
                                     free: { log.alone("free") },
                                     open: { log.alone("open") })
                log.record("go")
            }
            let steps = log.steps.withLock { Array($0[(round * 16)...]) }
            #expect(steps == Array(repeating: "drain", count: 4) + Array(repeating: "free", count: 4)
                    + Array(repeating: "open", count: 4) + Array(repeating: "go", count: 4), "round \(round)")
        }
        // The rungs' last frees, when their threads end.
        Self.onThreads(4) { _ in barrier.alone { log.alone("last free") } }
        #expect(log.steps.withLock { $0.suffix(4) } == Array(repeating: "last free", count: 4))
        let overlapped = log.overlapped.load(ordering: .sequentiallyConsistent)
        #expect(!overlapped, "a free or open ran beside another")
    }

    struct Refused: Error, Equatable {}

    @Test func aPartyThatFailsReleasesTheOthersWithItsError() {
        let barrier = RestartBarrier(parties: 3)
        let errors = Mutex<[Int: Error]>([:])
        Self.onThreads(3) { party in
            do {
                try barrier.restart(drain: { if party == 2 { usleep(20_000); throw Refused() } }, free: {}, open: {})
            } catch {
                errors.withLock { $0[party] = error }
            }
        }
        // Nobody hangs, and each reports the first failure, not a failure of its own.
        #expect(errors.withLock { $0.count } == 3)
        #expect(errors.withLock { $0.values.allSatisfy { $0 is Refused } })
        // Later restarts fail at once rather than wait for a party that is gone.
        #expect(throws: Refused.self) { try barrier.restart(drain: {}, free: {}, open: {}) }
    }

    @Test func anAbandonedPipelineReleasesAPartyWaitingForTheOthers() {
        let barrier = RestartBarrier(parties: 2)
        let released = Mutex<Bool>(false)
        let waiter = Thread {
            do {
                try barrier.restart(drain: {}, free: {}, open: {})
            } catch {
                if case .cancelled? = error as? TranscodeError { released.withLock { $0 = true } }
            }
        }
        waiter.start()
        usleep(50_000)
        barrier.breakAll(TranscodeError.cancelled)  // what RungEncoder.abandon() does
        for _ in 0..<6000 where !released.withLock({ $0 }) { usleep(10_000) }  // a hang guard (60 s), not a timing bound
        #expect(released.withLock { $0 })
    }
}
