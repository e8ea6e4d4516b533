import Foundation
import Synchronization

/// Keeps every shown video ahead of its viewers, whatever the host takes on after it showed.
///
/// A shown video's *margin* is the seconds its rungs list minus the seconds its earliest viewer
/// (one who started at the show) could have played: ``Margin``. Every rule below judges the margin
/// a shown video is left with when it ends, at the pace it ran at lately (``Margin/projected(at:)``):
/// on a host too slow to keep a video at 1×, a margin that looks wide now still runs dry. While any
/// shown, growing video's margin is under ``Policy/pauseBelow``, the job processes of videos not yet shown are
/// paused (`SIGSTOP`), and no job is claimed; once every margin is back over
/// ``Policy/resumeAbove`` they go on (`SIGCONT`). The videos not yet shown take turns: the one
/// claimed first runs, the others wait, so the CPU the shown ones leave makes one video playable
/// soon rather than all of them late. While a video grows in view that lasts until it shows, and
/// no other is claimed; otherwise a turn lasts at most ``Policy/turn`` of the time nothing grows in
/// view (a video slow to open its gate does not hold the others for long), then they all run. A
/// shown video far enough ahead (over ``Policy/yieldAbove``) yields to that one, stopped until
/// its margin is back to ``Policy/resumeAbove``: the earliest deadline runs first. So does a
/// shown video over ``Policy/resumeAbove`` while another is short, down to halfway between the
/// bounds (a video just shown with little listed gets the CPU the others can spare). A video whose
/// gate opened is shown only while every shown one is that far ahead (``mayShow(_:)``). A policy
/// whose ``Policy/pauseBelow`` is 0 stops nothing (the margins are still measured).
///
/// Why stopping and not `nice`: an unprivileged worker (the shipped unit's, the pod's) may raise
/// a process's nice value but never lower it back, so a job slowed while another video grows
/// would stay slow once its own video shows; and with autogroup on, nice ranks only within a
/// session. A stop and a continue need no privilege and undo each other. The time a job spends
/// stopped is not charged to its wall-clock limit (``pausedTime(_:)``).
public final class MarginGuard: Sendable {
    public struct Policy: Sendable {
        /// Under this margin (seconds), the videos not yet shown wait.
        public var pauseBelow: Double
        /// Over this margin on every shown video, they go on.
        public var resumeAbove: Double
        /// Over this margin, a shown video yields to the one waiting to be shown.
        public var yieldAbove: Double
        /// While no video grows in view, how long the one claimed first runs alone (seconds).
        public var turn: Double

        public init(pauseBelow: Double = 4, resumeAbove: Double = 8, yieldAbove: Double = 12, turn: Double = 30) {
            self.pauseBelow = pauseBelow
            self.resumeAbove = resumeAbove
            self.yieldAbove = yieldAbove
            self.turn = turn
        }
    }

    /// One job process under the guard (``register(pid:shows:)``).
    public struct Slot: Hashable, Sendable { let id: Int }

    fileprivate struct Entry {
        var pid: Int32
        /// Its video may show while it grows (not `--hold`): it takes turns with the others.
        var shows: Bool
        /// Since when it runs as the first of the videos not yet shown.
        var turnSince: ContinuousClock.Instant?
        var margin: Margin?
        var pausedSince: ContinuousClock.Instant?
        var pausedTotal = Duration.zero
        /// Its wait before the show (what is left out of the time it ran since).
        var pausedBeforeShow = Duration.zero
        var ranShort = false

        func paused(at now: ContinuousClock.Instant) -> Duration { pausedTotal + (pausedSince.map { now - $0 } ?? .zero) }
    }

    private struct State {
        var entries: [Int: Entry] = [:]
        var next = 0
        var holding = false
        var admits = true
        var growing = false
    }

    public let policy: Policy
    private let state = Mutex(State())
    private let metrics: WorkerMetrics?

    public init(policy: Policy = Policy(), metrics: WorkerMetrics? = nil) {
        self.policy = policy
        self.metrics = metrics
    }

    /// Starts guarding a job process just spawned (not shown yet: it waits while a margin is
    /// short). `shows`: its video may show while it grows, so it takes turns with the others.
    public func register(pid: Int32, shows: Bool) -> Slot {
        let slot = state.withLock { state in
            defer { state.next += 1 }
            state.entries[state.next] = Entry(pid: pid, shows: shows)
            return Slot(id: state.next)
        }
        evaluate()
        return slot
    }

    /// The slot's video is shown, or lists more (`listing`, as its job process reported it).
    public func listed(_ slot: Slot, _ listing: Margin.Listing, at now: ContinuousClock.Instant = .now) {
        state.withLock { state in
            guard var entry = state.entries[slot.id] else { return }
            if entry.margin == nil {
                Self.set(&entry, waiting: false, at: now)  // shown: it goes on at once
                entry.margin = Margin(shownAt: now, listing: listing)
                entry.pausedBeforeShow = entry.pausedTotal
            }
            let ran = (now - entry.margin!.shownAt) - (entry.paused(at: now) - entry.pausedBeforeShow)
            entry.margin!.record(listing, ran: ran.seconds)
            state.entries[slot.id] = entry
        }
    }

    /// Stops guarding the slot (its process ended, or is about to be stopped): it goes on if it
    /// waited. Returns the time it spent waiting.
    @discardableResult
    public func release(_ slot: Slot) -> Duration {
        state.withLock { state in
            guard let entry = state.entries.removeValue(forKey: slot.id) else { return .zero }
            if let since = entry.pausedSince {
                kill(entry.pid, SIGCONT)
                return entry.pausedTotal + (.now - since)
            }
            return entry.pausedTotal
        }
    }

    /// Time the slot's process has spent waiting so far (not charged to its job's time limit).
    public func pausedTime(_ slot: Slot) -> Duration {
        state.withLock { state in
            guard let entry = state.entries[slot.id] else { return .zero }
            return entry.pausedTotal + (entry.pausedSince.map { .now - $0 } ?? .zero)
        }
    }

    /// Whether the slot's video may be shown now that its gate opened: every other shown, growing
    /// video is at least ``Policy/resumeAbove`` ahead. Its gate judged its own speed, not the CPU
    /// the shown ones will take back: two videos shown while one is still catching up would
    /// both fall behind. A video not shown yet goes on growing, so it shows later with more
    /// listed. Always true when the policy stops nothing.
    public func mayShow(_ slot: Slot) -> Bool {
        guard policy.pauseBelow > 0 else { return true }
        let now = ContinuousClock.now
        return state.withLock { state in
            state.entries.allSatisfy { id, entry in
                id == slot.id || (entry.margin?.projected(at: now) ?? .infinity) >= policy.resumeAbove
            }
        }
    }

    /// Whether a new job may be claimed: no shown video is short of margin, and while one grows
    /// in view, no video waits to be shown.
    public var admits: Bool { state.withLock { $0.admits } }

    /// How many of `free` slots may be filled now: none while claims are held, one at a time
    /// while a video grows in view (the videos not yet shown take turns), else all.
    public func claims(free: Int) -> Int {
        state.withLock { !$0.admits ? 0 : $0.growing ? min(free, 1) : free }
    }

    /// Looks at every shown video's margin ten times a second until cancelled; `admitted` runs
    /// each time claims are admitted again.
    public func watch(admitted: @Sendable () -> Void) async {
        var admits = true
        while !Task.isCancelled {
            let now = evaluate()
            if now, !admits { admitted() }
            admits = now
            try? await SteadyTimer.sleep(for: .milliseconds(100))
        }
    }

    /// Looks at every shown video's margin `now`, and stops or continues the others to match.
    /// Returns whether claims are admitted.
    @discardableResult
    public func evaluate(at now: ContinuousClock.Instant = .now) -> Bool {
        let (smallest, shortNow, admits) = state.withLock { state in
            var shortNow = 0
            var smallest: Double?, least: Double?  // the margin now, the projected one
            for (id, entry) in state.entries {
                guard let margin = entry.margin?.seconds(at: now), margin.isFinite else { continue }  // not shown, or whole
                smallest = min(smallest ?? .infinity, margin)
                least = min(least ?? .infinity, entry.margin!.projected(at: now))
                if margin < 0, !entry.ranShort {
                    state.entries[id]!.ranShort = true
                    shortNow += 1
                }
            }
            let enabled = policy.pauseBelow > 0
            if enabled, let least, least < policy.pauseBelow { state.holding = true }
            if !enabled || (least ?? .infinity) >= policy.resumeAbove { state.holding = false }
            let growing = smallest != nil
            let unshown = state.entries.filter { $0.value.margin == nil && $0.value.shows }.keys
            let first = unshown.min()  // the one claimed first
            // A turn counts the time it runs alone with nothing in view: not while a video grows
            // in view (it lasts as long as that) nor while claims are held (it does not run).
            if let first, growing || state.holding || state.entries[first]!.turnSince == nil { state.entries[first]!.turnSince = now }
            let turnLasts = first.map { growing || now - state.entries[$0]!.turnSince! < .seconds(policy.turn) } ?? false
            let oneRuns = !state.holding && first != nil  // a video waiting to be shown runs
            for (id, entry) in state.entries {
                let waits: Bool
                if let margin = entry.margin?.projected(at: now) {  // shown: yields while far ahead
                    let paused = entry.pausedSince != nil
                    let toUnshown = oneRuns && margin > (paused ? policy.resumeAbove : policy.yieldAbove)
                    // The earliest deadline first: while a shown video is short, those ahead
                    // give it the CPU, down to halfway between the bounds.
                    let toShort = (least ?? .infinity) < policy.pauseBelow
                        && margin > (paused ? (policy.pauseBelow + policy.resumeAbove) / 2 : policy.resumeAbove)
                    waits = margin.isFinite && (toUnshown || toShort)
                } else {
                    waits = state.holding || (entry.shows && turnLasts && id != first)
                }
                Self.set(&state.entries[id]!, waiting: enabled && waits, at: now)
            }
            let admits = !enabled || (!state.holding && !(growing && !unshown.isEmpty))
            state.admits = admits
            state.growing = enabled && growing
            return (smallest, shortNow, admits)
        }
        metrics?.shownMargin(smallest, ranShort: shortNow)
        return admits
    }
}

extension MarginGuard {
    /// Stops or continues the entry's process, counting its wait.
    fileprivate static func set(_ entry: inout Entry, waiting: Bool, at now: ContinuousClock.Instant) {
        if waiting, entry.pausedSince == nil {
            kill(entry.pid, SIGSTOP)
            entry.pausedSince = now
        } else if !waiting, let since = entry.pausedSince {
            kill(entry.pid, SIGCONT)
            entry.pausedTotal += now - since
            entry.pausedSince = nil
        }
    }
}
