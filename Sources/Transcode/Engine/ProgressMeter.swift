import Foundation

/// Rate-limits progress reports to a few per second.
struct ProgressMeter {
    let totalSeconds: Double
    let report: @Sendable (TranscodeProgress) -> Void
    private let start = ContinuousClock.now
    private var lastReport = ContinuousClock.now

    init(totalSeconds: Double, report: @escaping @Sendable (TranscodeProgress) -> Void) {
        self.totalSeconds = totalSeconds
        self.report = report
    }

    var elapsed: Double {
        (ContinuousClock.now - start).seconds
    }

    mutating func update(outputSeconds: Double, frames: Int, force: Bool = false) {
        let now = ContinuousClock.now
        guard force || now - lastReport >= .milliseconds(250) else { return }
        lastReport = now
        report(TranscodeProgress(outputSeconds: outputSeconds, totalSeconds: totalSeconds,
                                 framesEncoded: frames, elapsedSeconds: elapsed))
    }
}
