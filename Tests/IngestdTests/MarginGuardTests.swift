import Foundation
import Ingest
import IngestdTesting
import Testing

/// ``MarginGuard`` on real processes: the job processes of videos not yet shown are stopped
/// (`SIGSTOP`, state `T` in /proc) while a shown video is short of margin, and continued once
/// every shown video is ahead again; the wait is not charged to a job's time limit.
@Suite(.offTheSharedPool) struct MarginGuardTests {
    /// A real process to stand for a job process (`sleep`), killed at the end.
    final class Sleeper {
        let process = Process()
        init() throws {
            process.executableURL = URL(fileURLWithPath: "/bin/sleep")
            process.arguments = ["600"]
            try process.run()
        }
        deinit {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        var pid: Int32 { process.processIdentifier }
        var state: Character? { MarginGuardTests.state(pid) }
    }

    @Test func theOthersWaitWhileAShownVideoIsShortAndGoOnOnceEveryShownOneIsAhead() throws {
        let metrics = WorkerMetrics()
        let margins = MarginGuard(policy: .init(pauseBelow: 4, resumeAbove: 8), metrics: metrics)
        let shown = try Sleeper(), waiting = try Sleeper(), later = try Sleeper()
        let a = margins.register(pid: shown.pid, shows: true), b = margins.register(pid: waiting.pid, shows: true)
        #expect(margins.evaluate() && margins.admits, "nothing shown: nothing waits")

        margins.listed(a, .init(seconds: 2, ended: false))  // shown with 2 s listed: short
        #expect(!margins.evaluate() && !margins.admits, "a short margin admits no claim")
        try Daemon.wait(timeout: 10, "the job not yet shown stopped") { waiting.state == "T" }
        #expect(shown.state != "T", "a shown video's process is never stopped")
        let c = margins.register(pid: later.pid, shows: true)  // spawned while short: stopped at once
        try Daemon.wait(timeout: 10, "a job spawned while short stopped") { later.state == "T" }

        margins.listed(a, .init(seconds: 6, ended: false))  // between the bounds: still held
        #expect(!margins.evaluate())
        margins.listed(a, .init(seconds: 100, ended: false))  // far ahead: the one claimed first goes on
        #expect(!margins.evaluate() && margins.claims(free: 3) == 0, "another waits its turn: no claim")
        try Daemon.wait(timeout: 10, "the first job not yet shown continued") { waiting.state != "T" }
        #expect(later.state == "T", "the next waits its turn while a video grows in view")
        try Daemon.wait(timeout: 10, "a shown video far ahead yields to the one waiting to be shown") { shown.state == "T" }
        #expect(margins.pausedTime(b) > .zero && margins.pausedTime(b) < .seconds(60))

        margins.listed(a, .init(seconds: 1, ended: false))
        #expect(!margins.evaluate())
        try Daemon.wait(timeout: 10, "stopped again") { waiting.state == "T" }
        try Daemon.wait(timeout: 10, "a shown video short of margin goes on") { shown.state != "T" }
        margins.listed(b, .init(seconds: 30, ended: false))  // its own video shows: it goes on at once
        try Daemon.wait(timeout: 10, "a video that shows goes on") { waiting.state != "T" }
        margins.release(c)  // released while stopped: continued
        try Daemon.wait(timeout: 10, "a released job continued") { later.state != "T" }
        margins.listed(a, .init(seconds: 100, ended: false))
        #expect(margins.evaluate() && margins.claims(free: 3) == 1, "while videos grow in view, one claim at a time")

        margins.listed(a, .init(seconds: 0, ended: false))  // its earliest viewer caught up
        Thread.sleep(forTimeInterval: 0.05)
        margins.evaluate()
        margins.evaluate()  // counted once per video
        let exposition = metrics.registry.emitToString()
        #expect(exposition.contains("ingestd_shown_ran_short_total 1"), "\(exposition)")
        #expect(exposition.contains("ingestd_shown_margin_seconds -"), "\(exposition)")
        margins.listed(a, .init(seconds: 0, ended: true))  // whole: never short again
        margins.listed(b, .init(seconds: 30, ended: true))
        #expect(margins.evaluate() && margins.claims(free: 3) == 3, "none grows in view: every free slot")
        #expect(metrics.registry.emitToString().contains("ingestd_shown_margin_seconds nan"), "none grows in view")
    }

    /// With no video growing in view, the videos not yet shown still take turns, the one claimed
    /// first alone, for at most a turn; a job whose video cannot show (`--hold`) never waits its turn.
    @Test func theVideosNotYetShownTakeTurnsForAtMostATurn() throws {
        let margins = MarginGuard(policy: .init(pauseBelow: 4, resumeAbove: 8, turn: 30))
        let first = try Sleeper(), second = try Sleeper(), held = try Sleeper()
        let a = margins.register(pid: first.pid, shows: true)
        _ = margins.register(pid: second.pid, shows: true)
        _ = margins.register(pid: held.pid, shows: false)
        #expect(margins.evaluate() && margins.claims(free: 2) == 2, "none grows in view: claims go on")
        try Daemon.wait(timeout: 10, "the second waits for the first's turn") { second.state == "T" }
        #expect(first.state != "T" && held.state != "T")
        margins.listed(a, .init(seconds: 30, ended: true))  // the first shows whole: the second's turn
        margins.evaluate()
        try Daemon.wait(timeout: 10, "the second's turn") { second.state != "T" }
        let third = try Sleeper()
        _ = margins.register(pid: third.pid, shows: true)
        try Daemon.wait(timeout: 10, "the third waits for the second's turn") { third.state == "T" }
        // The second opens no gate within its turn: the third runs too, not held up for long.
        #expect(margins.evaluate(at: .now + .seconds(29)))
        #expect(third.state == "T", "within the turn")
        margins.evaluate(at: .now + .seconds(31))
        try Daemon.wait(timeout: 10, "the turn is over") { third.state != "T" }
        #expect(held.state != "T", "a job whose video cannot show never waits its turn")
    }

    /// A turn counts only the time nothing grows in view: once the shown video is whole, the one
    /// whose turn it is still runs alone for a whole turn, however long the shown one grew.
    @Test func aTurnCountsOnlyWhileNoVideoGrowsInView() throws {
        let margins = MarginGuard(policy: .init(pauseBelow: 4, resumeAbove: 8, turn: 30))
        let shown = try Sleeper(), first = try Sleeper(), second = try Sleeper()
        let a = margins.register(pid: shown.pid, shows: true)
        let start = ContinuousClock.now
        margins.listed(a, .init(seconds: 100, ended: false), at: start)
        _ = margins.register(pid: first.pid, shows: true)
        _ = margins.register(pid: second.pid, shows: true)
        margins.evaluate(at: start + .seconds(40))  // 40 s in view: the first's turn lasts
        try Daemon.wait(timeout: 10, "the second waits for the first's turn") { second.state == "T" }
        margins.listed(a, .init(seconds: 100, ended: true), at: start + .seconds(40))
        margins.evaluate(at: start + .seconds(69))
        Thread.sleep(forTimeInterval: 0.1)
        #expect(second.state == "T" && first.state != "T", "29 s of nothing in view: still the first's turn")
        margins.evaluate(at: start + .seconds(71))
        try Daemon.wait(timeout: 10, "the turn is over") { second.state != "T" }
    }

    /// The earliest deadline first among shown videos: while one is short, one ahead by more than
    /// `resumeAbove` stops, and goes on once it is down to halfway between the bounds, or once
    /// none is short.
    @Test func aShownVideoAheadGivesTheCPUToOneThatIsShort() throws {
        let margins = MarginGuard(policy: .init(pauseBelow: 4, resumeAbove: 8))
        let ahead = try Sleeper(), short = try Sleeper()
        let a = margins.register(pid: ahead.pid, shows: true), b = margins.register(pid: short.pid, shows: true)
        margins.listed(a, .init(seconds: 100, ended: false))
        margins.listed(b, .init(seconds: 2, ended: false))  // just shown with 2 s listed
        margins.evaluate()
        try Daemon.wait(timeout: 10, "the video ahead yields to the short one") { ahead.state == "T" }
        #expect(short.state != "T")
        margins.listed(a, .init(seconds: 7, ended: false))
        margins.evaluate()
        Thread.sleep(forTimeInterval: 0.1)
        #expect(ahead.state == "T", "7 s ahead, over halfway (6): still yielding")
        margins.listed(a, .init(seconds: 5, ended: false))
        margins.evaluate()
        try Daemon.wait(timeout: 10, "down to halfway: it goes on") { ahead.state != "T" }
        margins.listed(a, .init(seconds: 100, ended: false))
        margins.listed(b, .init(seconds: 5, ended: false))
        margins.evaluate()
        Thread.sleep(forTimeInterval: 0.1)
        #expect(ahead.state != "T", "none short: far ahead, it runs (no video waits to be shown)")
    }

    /// The margin a shown video is left with at its end, at the pace it ran lately: a wide margin
    /// with much left to list at under 1× is short; near its end, or at 1×, it is the margin.
    @Test func theProjectedMarginCountsThePaceOverWhatIsLeft() {
        let shown = ContinuousClock.now
        var margin = Margin(shownAt: shown, listing: .init(seconds: 12, ended: false, totalSeconds: 20))
        #expect(margin.projected(at: shown) == 12, "no pace yet: the margin")
        margin.record(.init(seconds: 12, ended: false, totalSeconds: 20), ran: 0)
        margin.record(.init(seconds: 13, ended: false, totalSeconds: 20), ran: 2)
        margin.record(.init(seconds: 14, ended: false, totalSeconds: 20), ran: 4)  // 0.5x
        let now = shown + .seconds(4)
        #expect(margin.seconds(at: now) == 10)
        let expected: Double = 10 - 6 * (1 / 0.5 - 1)
        #expect(margin.projected(at: now) == expected, "6 s left at 0.5x lose 6 s: 4 s at the end")
        margin.record(.init(seconds: 19.5, ended: false, totalSeconds: 20), ran: 6)
        let later = shown + .seconds(6)
        let pace = (19.5 - 12) / 6
        #expect(abs(margin.projected(at: later) - margin.seconds(at: later)) < 1e-9, "over 1x: the margin itself (\(pace))")
        var stalled = Margin(shownAt: shown, listing: .init(seconds: 5, ended: false, totalSeconds: 20))
        stalled.record(.init(seconds: 5, ended: false, totalSeconds: 20), ran: 0)
        stalled.record(.init(seconds: 5, ended: false, totalSeconds: 20), ran: 3)
        #expect(stalled.projected(at: shown + .seconds(3)) == -.infinity, "listing nothing with 15 s left: it runs dry")
        var unsaid = Margin(shownAt: shown, listing: .init(seconds: 5, ended: false))
        unsaid.record(.init(seconds: 5, ended: false), ran: 3)
        #expect(unsaid.projected(at: shown + .seconds(3)) == 2, "no length said: the margin")
    }

    /// A shown video 10 s ahead but listing at 0.5x with 20 s left holds the claims and stops the
    /// videos not yet shown, as one short of margin does; at 1x the same margin is ahead enough.
    @Test func aShownVideoAheadButTooSlowForWhatIsLeftHoldsTheOthers() throws {
        let margins = MarginGuard(policy: .init(pauseBelow: 4, resumeAbove: 8))
        let shown = try Sleeper(), waiting = try Sleeper()
        let a = margins.register(pid: shown.pid, shows: true), b = margins.register(pid: waiting.pid, shows: true)
        let start = ContinuousClock.now
        margins.listed(a, .init(seconds: 10, ended: false, totalSeconds: 40), at: start)
        margins.listed(a, .init(seconds: 11.5, ended: false, totalSeconds: 40), at: start + .seconds(3))
        margins.evaluate(at: start + .seconds(3))  // 8.5 s ahead, 28.5 s left at 0.5x: 20 s short at its end
        try Daemon.wait(timeout: 10, "the job not yet shown stopped, as for a short margin") { waiting.state == "T" }
        #expect(margins.claims(free: 2) == 0 && shown.state != "T")
        margins.listed(a, .init(seconds: 16, ended: false, totalSeconds: 40), at: start + .seconds(6))
        margins.evaluate(at: start + .seconds(6))  // 1x over the window: 10 s ahead is ahead
        try Daemon.wait(timeout: 10, "the job not yet shown goes on (its turn)") { waiting.state != "T" }
        _ = b
    }

    /// A video whose gate opened is shown only while every shown, growing one is at least twice
    /// the margin ahead (or once it is whole): two shown while one catches up would both fall
    /// behind.
    @Test func aVideoIsShownOnlyWhileTheShownOnesAreAheadEnough() throws {
        let margins = MarginGuard(policy: .init(pauseBelow: 4, resumeAbove: 8))
        let shown = try Sleeper(), next = try Sleeper()
        let a = margins.register(pid: shown.pid, shows: true), b = margins.register(pid: next.pid, shows: true)
        #expect(margins.mayShow(a) && margins.mayShow(b), "none shown yet")
        margins.listed(a, .init(seconds: 6, ended: false))
        #expect(!margins.mayShow(b), "the shown one is 6 s ahead: under 8")
        margins.listed(a, .init(seconds: 30, ended: false))
        #expect(margins.mayShow(b))
        margins.listed(a, .init(seconds: 2, ended: true))
        #expect(margins.mayShow(b), "whole: it needs no more CPU")
        let off = MarginGuard(policy: .init(pauseBelow: 0, resumeAbove: 0))
        let c = off.register(pid: shown.pid, shows: true), d = off.register(pid: next.pid, shows: true)
        off.listed(c, .init(seconds: 0, ended: false))
        #expect(off.mayShow(d), "--margin 0: shown at once")
        off.release(c)
        off.release(d)
    }

    /// `--margin 0`: nothing waits, whatever the margins (they are still measured).
    @Test func aPolicyOfNoMarginStopsNothing() throws {
        let metrics = WorkerMetrics()
        let margins = MarginGuard(policy: .init(pauseBelow: 0, resumeAbove: 0), metrics: metrics)
        let shown = try Sleeper(), other = try Sleeper()
        let a = margins.register(pid: shown.pid, shows: true)
        _ = margins.register(pid: other.pid, shows: true)
        margins.listed(a, .init(seconds: 0, ended: false))
        Thread.sleep(forTimeInterval: 0.05)
        #expect(margins.evaluate() && margins.claims(free: 2) == 2)
        Thread.sleep(forTimeInterval: 0.2)
        #expect(other.state != "T")
        #expect(metrics.registry.emitToString().contains("ingestd_shown_ran_short_total 1"))
    }

    /// A real job process spawned while another video is short of margin waits, stopped, longer
    /// than its time limit; once the other video is whole it goes on and publishes: its wait was
    /// not charged.
    @Test func aJobThatWaitsForAShownVideoIsNotChargedForItsWait() async throws {
        let margins = MarginGuard()
        let shown = try Sleeper()
        let holder = margins.register(pid: shown.pid, shows: true)
        margins.listed(holder, .init(seconds: 0, ended: false))
        let runner = JobRunner(executable: Paths.binary, presetArgument: Paths.root + "/Presets/default.json", timeoutSeconds: 40,
                               limits: ChildLimits(memoryMB: 8192, cpuSeconds: 480))
        let base = Paths.scratch("margin-guard-job")
        try? FileManager.default.removeItem(atPath: base)
        try FileManager.default.createDirectory(atPath: "\(base)/job", withIntermediateDirectories: true)
        defer { margins.release(holder) }  // never leaves a stopped job process behind
        // On a thread of its own: the shared pool may be held by other suites' blocking waits.
        let run = Task(executorPreference: DispatchTaskExecutor.shared) { [runner] in
            await runner.run(input: .path(Paths.sample("noaudio_odd.webm")), output: "\(base)/out", jobDirectory: "\(base)/job",
                             watcher: GrowingShow(margins: margins)) { false }
        }
        func jobProcess() -> Int32? {
            Daemon.children(of: getpid()).first { Daemon.commandLine($0).contains("job-run") && Daemon.commandLine($0).contains("margin-guard-job") }
        }
        try Daemon.wait(timeout: 60, "the job process stopped") {
            jobProcess().map { Self.state($0) == "T" } ?? false
        }
        try await Task.sleep(for: .seconds(45))  // longer than its 40 s limit, stopped all along
        #expect(jobProcess().map { Self.state($0) == "T" } == true, "still there, still waiting")
        margins.listed(holder, .init(seconds: 10, ended: true))
        margins.evaluate()
        let outcome = await run.value
        guard case .published = outcome else {
            Issue.record("a job charged for its wait: \(outcome)")
            return
        }
        #expect(FileManager.default.fileExists(atPath: "\(base)/out/master.m3u8"))
    }

    /// The scheduler state of `pid` from /proc/PID/stat (`T`: stopped).
    static func state(_ pid: Int32) -> Character? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return nil }
        return text[text.index(after: close)...].split(separator: " ").first?.first
    }
}
