import Foundation
import Testing
@testable import Ingest

/// The worker's host health as its own unit (``HostGate``, ``StoreBackoff``), driven by the
/// time given: each rule that decides whether this host claims.
struct HostGateTests {
    let start = ContinuousClock.now
    func at(_ seconds: Double) -> ContinuousClock.Instant { start + .seconds(seconds) }
    static let healthy = HostHealth.Check(problem: nil, freeBytes: 10 << 30)

    @Test func aHostProblemStopsClaimsAndIsSaidOncePerChange() {
        var gate = HostGate(root: "/cdn")
        #expect(gate.look(Self.healthy, now: at(0)) == .init(problem: nil, was: nil))
        let broken = HostHealth.Check(problem: "/cdn: not writable")
        let first = gate.look(broken, now: at(1))
        #expect(first.problem == "/cdn: not writable" && first.changed)
        #expect(!gate.look(broken, now: at(2)).changed, "the same problem again is no news")
        let back = gate.look(Self.healthy, now: at(3))
        #expect(back.problem == nil && back.was == "/cdn: not writable")
    }

    /// A fault pauses claims 5 s, doubling while faults repeat, up to 5 min; a publish resets it.
    @Test func faultsPauseClaimsForLongerEachTimeUntilAJobPublishes() {
        var gate = HostGate(root: "/cdn")
        gate.fault("object storage: refused", now: at(0))
        #expect(gate.look(Self.healthy, now: at(4.9)).problem == "object storage: refused")
        #expect(gate.look(Self.healthy, now: at(5.1)).problem == nil)
        gate.fault("again", now: at(10))
        #expect(gate.look(Self.healthy, now: at(19)).problem == "again", "10 s the second time")
        #expect(gate.look(Self.healthy, now: at(20.1)).problem == nil)
        for round in 0..<10 { gate.fault("again", now: at(100 + Double(round))) }
        #expect(gate.look(Self.healthy, now: at(109 + 299)).problem == "again")
        #expect(gate.look(Self.healthy, now: at(109 + 301)).problem == nil, "never more than 5 min")
        gate.published()
        gate.fault("once more", now: at(1000))
        #expect(gate.look(Self.healthy, now: at(1005.1)).problem == nil, "5 s again after a publish")
    }

    /// After a full disk, no claim until 1 MiB more is free on either file system, or 5 min passed.
    @Test func aFullDiskWaitsForSpaceOrFiveMinutes() throws {
        var gate = HostGate(root: "/cdn")
        gate.fault("no space", freeThen: .init(problem: nil, freeBytes: 1000, scratchFreeBytes: 5000), now: at(0))
        let full = gate.look(.init(problem: nil, freeBytes: 1000 + 1000, scratchFreeBytes: 5000), now: at(10))
        #expect(try #require(full.problem).contains("disk full with 1000 bytes free on /cdn"))
        #expect(gate.look(.init(problem: nil, freeBytes: 1000, scratchFreeBytes: 5000 + (1 << 20)), now: at(11)).problem == nil,
                "space freed in the scratch")
        var stuck = HostGate(root: "/cdn")
        stuck.fault("no space", freeThen: .init(problem: nil, freeBytes: 1000), now: at(0))
        #expect(stuck.look(.init(problem: nil, freeBytes: 1000), now: at(299)).problem != nil)
        #expect(stuck.look(.init(problem: nil, freeBytes: 1000), now: at(301)).problem == nil, "a job too large for the disk parks nothing for good")
    }

    @Test func threeUnconfirmedMissingInputsInARowAreTheHostsFault() {
        var gate = HostGate(root: "/cdn")
        #expect(gate.missingInput(confirmed: false) == nil)
        #expect(gate.missingInput(confirmed: false) == nil)
        #expect(gate.missingInput(confirmed: true) == nil, "a confirmed one breaks the row")
        #expect(gate.missingInput(confirmed: false) == nil)
        #expect(gate.missingInput(confirmed: false) == nil)
        #expect(gate.missingInput(confirmed: false)?.contains("three in a row") == true)
        #expect(gate.missingInput(confirmed: false) == nil, "the count starts again")
    }

    @Test func aStoreThatDoesNotAnswerIsAskedLessOftenUpTo30Seconds() {
        var backoff = StoreBackoff()
        #expect(backoff.allows(at(0)))
        #expect(backoff.failed(at(0), jitter: 1) == .milliseconds(500))
        #expect(!backoff.allows(at(0.4)) && backoff.allows(at(0.5)))
        #expect(backoff.failed(at(1), jitter: 1) == .seconds(1))
        for _ in 0..<10 { _ = backoff.failed(at(2), jitter: 1) }
        #expect(backoff.failed(at(2), jitter: 1.2) == .seconds(36), "30 s, jittered")
        let ended = backoff.answered(), again = backoff.answered()
        #expect(ended, "the end of a stretch of failures")
        #expect(!again && backoff.allows(at(2)))
        #expect(backoff.failed(at(3), jitter: 1) == .milliseconds(500), "short again once it answered")
    }
}
