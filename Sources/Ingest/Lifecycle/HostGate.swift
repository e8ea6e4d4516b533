import Foundation

/// Whether this host claims now: what ``HostHealth`` sees, the pause after a host fault, a full
/// disk's wait for space, and the inputs this host alone found missing. Rules and state only,
/// driven by the time it is given: the worker checks the host, asks, and says what changed.
struct HostGate: Sendable {
    /// What one look says: why the host claims nothing (nil: it claims), and why it did not before.
    struct Verdict: Equatable, Sendable {
        var problem: String?
        var was: String?
        var changed: Bool { problem != was }
    }

    /// The directory named when a full disk is waited for.
    let root: String
    /// Why the host claims nothing now, if it does not.
    private(set) var problem: String?
    /// After a host fault, no claim before this, even if the check passes (doubling pauses).
    private var pausedUntil: ContinuousClock.Instant?
    private var pause = Self.firstPause
    /// Free bytes on the CDN's and the scratch's file systems when a job last found a disk full:
    /// no claim until one of them has ``spaceRegained`` more (`--min-free 0` alone would let the
    /// host claim into the same full disk after every pause), nor for ``fullWaitsAtMost``: a job
    /// whose output alone outgrew the free space must not park the host for good.
    private var full: (cdn: Int64?, scratch: Int64?, since: ContinuousClock.Instant)?
    /// Inputs in a row this host found missing that no other host had confirmed.
    private var unconfirmedMissing = 0

    static let spaceRegained: Int64 = 1 << 20
    static let fullWaitsAtMost = Duration.seconds(300)
    static let firstPause = Duration.seconds(5)
    static let longestPause = Duration.seconds(300)
    /// Unconfirmed missing inputs in a row that make a host fault.
    static let missingInARow = 3

    init(root: String) { self.root = root }

    /// Whether the host claims, given its `check` now.
    mutating func look(_ check: HostHealth.Check, now: ContinuousClock.Instant) -> Verdict {
        let paused = pausedUntil.map { now < $0 } ?? false
        if let full, check.problem == nil {
            func regained(_ now: Int64?, _ then: Int64?) -> Bool { now.map { $0 >= (then ?? 0) + Self.spaceRegained } ?? false }
            if regained(check.freeBytes, full.cdn) || regained(check.scratchFreeBytes, full.scratch)
                || now - full.since > Self.fullWaitsAtMost { self.full = nil }
        }
        let stillFull = full.map { "a job found the disk full with \($0.cdn ?? 0) bytes free on \(root): waiting for \(Self.spaceRegained) more" }
        let verdict = Verdict(problem: check.problem ?? stillFull ?? (paused ? problem : nil), was: problem)
        problem = verdict.problem
        return verdict
    }

    /// An attempt failed because of the host, not the upload: no claim until a pause (5 s,
    /// doubling up to 5 min while faults repeat) has passed; after a full disk (`freeThen`: what
    /// was free as it was found), not before space was freed either.
    mutating func fault(_ problem: String, freeThen: HostHealth.Check? = nil, now: ContinuousClock.Instant) {
        if let freeThen { full = (freeThen.freeBytes, freeThen.scratchFreeBytes, now) }
        self.problem = problem
        pausedUntil = now + pause
        pause = min(pause * 2, Self.longestPause)
    }

    /// A job published: the host works, its pauses start short again.
    mutating func published() {
        pause = Self.firstPause
        unconfirmedMissing = 0
    }

    /// A host that keeps finding inputs missing which no other host has confirmed is the likely
    /// fault (a stale mount under a healthy root): the problem to fault with once that happened
    /// ``missingInARow`` times in a row, so it cannot turn the backlog over to be rejected on
    /// its say alone.
    mutating func missingInput(confirmed: Bool) -> String? {
        guard !confirmed else { unconfirmedMissing = 0; return nil }
        unconfirmedMissing += 1
        guard unconfirmedMissing >= Self.missingInARow else { return nil }
        unconfirmedMissing = 0
        return "inputs missing on this host that no other host has confirmed, three in a row (is its view of the uploads stale?)"
    }
}

/// While the store does not answer: no call before ``retryAt``, 0.5 s doubling to 30 s, each
/// step jittered ±20 % so a fleet that lost its database does not come back in step.
struct StoreBackoff: Sendable {
    private(set) var retryAt: ContinuousClock.Instant?
    private var step = Duration.zero

    /// Whether a store call may be made at `now`.
    func allows(_ now: ContinuousClock.Instant) -> Bool { retryAt.map { now >= $0 } ?? true }

    /// A call failed at `now`: the wait before the next.
    mutating func failed(_ now: ContinuousClock.Instant, jitter: Double = .random(in: 0.8...1.2)) -> Duration {
        step = min(max(step * 2, .milliseconds(500)), .seconds(30))
        let wait = step * jitter
        retryAt = now + wait
        return wait
    }

    /// A call went through; true when it ends a stretch of failures.
    mutating func answered() -> Bool {
        defer { (retryAt, step) = (nil, .zero) }
        return retryAt != nil
    }
}
