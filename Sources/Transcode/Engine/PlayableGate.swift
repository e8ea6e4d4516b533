import Foundation

/// Decides when a growing ladder becomes playable, and opens once: every rung must list enough
/// video that a player which starts at the beginning, and reloads each playlist once per target
/// duration (RFC 8216 §6.3.4), never runs out before the ladder is done. Rungs report from their
/// own threads.
final class PlayableGate: @unchecked Sendable {
    private let lock = NSLock()
    private var listed: [Double]
    private var ended: [Bool]
    private var opened = false
    private let targetDuration: Double
    private let totalSeconds: Double
    /// The encode's speed is measured on the time it ran (a stopped job process's wait left out),
    /// over the last ``window`` seconds of it: a job starved while others ran is judged by how
    /// fast it goes now that it has the CPU.
    private let clock = RunningClock()
    private var history: [(elapsed: Double, least: Double)] = []
    static let window = 5.0
    /// Runs once, on the thread of the rung that opened the gate, with the seconds every rung lists.
    var open: ((Double) throws -> Void)?
    /// Runs after the gate opened, each time every rung lists more (`ended`: every rung has
    /// ended), on the thread of the rung that made it so: the running report of a shown video.
    var grew: ((Double, _ ended: Bool) -> Void)?
    private var reported = 0.0
    private var reportedEnd = false

    init(rungs: Int, targetDuration: Int, totalSeconds: Double) {
        listed = Array(repeating: 0, count: rungs)
        ended = Array(repeating: false, count: rungs)
        self.targetDuration = Double(targetDuration)
        self.totalSeconds = totalSeconds
    }

    /// Seconds of video every rung must list before the ladder is playable: two target durations
    /// (one for the reload a player waits, one for a segment that has not landed yet), more when
    /// the encode runs slower than real time (`speed` < 1), so that the player, moving at 1×,
    /// reaches the end no sooner than the encoder does: `D − speed·(D − 2·TD)`.
    static func secondsNeeded(targetDuration: Double, totalSeconds: Double, speed: Double) -> Double {
        let margin = 2 * targetDuration
        guard speed < 1 else { return min(margin, totalSeconds) }
        return min(totalSeconds, max(margin, totalSeconds - max(0, speed) * (totalSeconds - margin)))
    }

    /// The pace the gate counts on: seconds listed per second run over the last `window` seconds,
    /// `least` listed after `elapsed` seconds run; `history` keeps the listings seen (each change,
    /// with when), trimmed to the window. The pace is taken from the first listing on (or the
    /// window's start, if later): the seconds before anything is listed are the pipeline filling
    /// (codecs opening, the encoders' lookahead), a delay the viewer never sees again, not the
    /// pace the rest comes at; that pace is counted at ``paceTrust``. Until the ladder has listed
    /// for ``minimumSpan`` seconds, the whole run's average is the pace, as it is: the filling it
    /// includes already makes it the cautious figure.
    static func countedPace(_ history: inout [(elapsed: Double, least: Double)], least: Double, elapsed: Double,
                            window: Double = PlayableGate.window) -> Double {
        guard least.isFinite, elapsed > 0 else { return least.isFinite ? 0 : .infinity }
        if history.last?.least != least { history.append((elapsed, least)) }
        if let base = history.lastIndex(where: { $0.elapsed <= elapsed - window }) { history.removeFirst(base) }
        guard let start = history.first(where: { $0.least > 0 }), elapsed - start.elapsed >= minimumSpan else { return least / elapsed }
        return paceTrust * (least - start.least) / (elapsed - start.elapsed)
    }

    /// How long a ladder must have listed before its pace is measured from its first listing.
    static let minimumSpan = 1.0
    /// The share of its pace measured from the first listing the gate counts on: a pace measured
    /// over a few seconds, on a host whose other jobs come and go, may be a tenth too fast. A
    /// ladder at 1× measured is shown with the listing a 0.9× one needs (3.8 s of a 20 s video,
    /// not 2).
    static let paceTrust = 0.9

    /// Never opens from now on (the run failed).
    func close() {
        lock.lock()
        opened = true
        lock.unlock()
    }

    /// Rung `index` now lists `seconds` of video (`ended`: all of it).
    func rung(_ index: Int, lists seconds: Double, ended rungEnded: Bool) throws {
        lock.lock()
        listed[index] = seconds
        ended[index] = rungEnded
        let least = zip(listed, ended).map { $1 ? Double.infinity : $0 }.min() ?? 0
        let speed = Self.countedPace(&history, least: least, elapsed: clock.elapsed)
        let wasOpen = opened
        let opens = !opened && least >= Self.secondsNeeded(targetDuration: targetDuration, totalSeconds: totalSeconds, speed: speed)
        if opens { opened = true }
        let open = self.open
        let allEnded = ended.allSatisfy { $0 }
        let lists = allEnded ? totalSeconds : listed.min() ?? 0
        let grows = wasOpen && (lists > reported || (allEnded && !reportedEnd))
        if opens || grows {
            reported = lists
            reportedEnd = allEnded
        }
        let grew = self.grew
        lock.unlock()
        if opens { try open?(lists) }
        if grows { grew?(lists, allEnded) }
    }
}
