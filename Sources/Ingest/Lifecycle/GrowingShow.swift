import Foundation
import Logging
import Synchronization

/// One job process under the margin guard and, for a video played while it is made, its show:
/// the one room for when and how a growing video comes into view. The job process tells it
/// what it lists through ``JobWatcher``; the rule, in order:
///
/// - **Gate**: the job process reports once its ladder can be played (its own gate, judged at
///   its own pace: docs/OUTPUT.md).
/// - **Margin**: the video is shown only while every other shown video is ahead enough to share
///   the CPU, or once it is whole (``MarginGuard/mayShow(_:)``); every report after the show is
///   its margin's running report (``MarginGuard/listed(_:_:at:)``). Meanwhile the guard may hold
///   the process back (`SIGSTOP`), and that wait is not charged to its time limit.
/// - **Show**: a bucket's version gets its master first, after everything it names (the
///   mirror); then the store shows it under the job's fence, with its `playable` event and
///   `upload.playable` webhook (``JobStore/playable(_:output:target:_:)``), once per attempt.
public final class GrowingShow: JobWatcher {
    /// What a growing attempt's video is shown through.
    struct Show: Sendable {
        var store: any JobStore
        var job: ClaimedJob
        var output: AttemptOutput
        var target: any OutputTarget
        /// A bucket's copy of the growing version, whose master goes first.
        var mirror: (any RemoteMirror)?
        var log: Logger
    }

    private struct State {
        var slot: MarginGuard.Slot?
        var spawned = Date()
        var shown = false
    }

    private let margins: MarginGuard
    private let show: Show?
    private let state = Mutex(State())

    init(margins: MarginGuard, show: Show?) {
        self.margins = margins
        self.show = show
    }

    /// A job process under the guard alone: its output comes into view whole.
    public convenience init(margins: MarginGuard) { self.init(margins: margins, show: nil) }

    public func started(pid: Int32, at: Date) {
        let slot = margins.register(pid: pid, shows: show != nil)
        state.withLock { ($0.slot, $0.spawned) = (slot, at) }
    }

    public func reported(_ report: JobPlayable) async -> Bool {
        let (slot, spawned, shown) = state.withLock { ($0.slot, $0.spawned, $0.shown) }
        guard let show, let slot else { return false }
        if !shown, !report.listing.ended, !margins.mayShow(slot) { return false }
        margins.listed(slot, report.listing)
        guard !shown else { return true }
        state.withLock { $0.shown = true }
        await show.show(report.bounded(since: spawned))
        return true
    }

    public var waited: Duration { state.withLock { $0.slot }.map { margins.pausedTime($0) } ?? .zero }

    public func ending() {
        if let slot = state.withLock({ $0.slot }) { margins.release(slot) }
    }
}

extension GrowingShow.Show {
    /// Shows the video (a store that cannot, or an attempt that lost the job, shows nothing).
    func show(_ report: JobPlayable) async {
        do {
            try await mirror?.sync(master: true)
            if try await store.playable(job, output: output, target: target, report) {
                log.info("playable", metadata: ["output": "\(target.place(output).master)", "listed": "\(report.seconds)"])
            }
        } catch {
            log.warning("cannot show the growing video", metadata: ["error": "\(error)"])
        }
    }
}
