/// Chooses the poster frame: the sampled frame with the most tonal range, never a black,
/// white or flat one while any other exists. Scores come from libavfilter's `signalstats`.
struct PosterPicker {
    private(set) var best: Frame?
    private(set) var bestScore = -Double.infinity
    private(set) var bestSeconds = 0.0

    /// Score of a frame from its luma statistics (8-bit): the 10–90 % spread, penalised for
    /// frames that are nearly black or white on average.
    static func score(yLow: Double, yHigh: Double, yAverage: Double) -> Double {
        let spread = yHigh - yLow
        let exposurePenalty = yAverage < 32 || yAverage > 224 ? 200.0 : 0
        return spread - exposurePenalty
    }

    static func isBlank(yLow: Double, yHigh: Double, yAverage: Double) -> Bool {
        score(yLow: yLow, yHigh: yHigh, yAverage: yAverage) < 12
    }

    mutating func consider(_ frame: Frame, seconds: Double) {
        let stat = { (key: String) in frame.metadata("lavfi.signalstats.\(key)").flatMap(Double.init) }
        guard let low = stat("YLOW"), let high = stat("YHIGH"), let average = stat("YAVG") else {
            if best == nil { best = frame.reference(); bestSeconds = seconds }
            return
        }
        let score = Self.score(yLow: low, yHigh: high, yAverage: average)
        // Ties go to the earlier frame; a later frame must be clearly better to win.
        if score > bestScore + 4 {
            best = frame.reference()
            bestScore = score
            bestSeconds = seconds
        }
    }
}
