/// Chooses the poster frame among the sampled candidates (scored by libavfilter's `signalstats`):
/// the one with the most tonal range among those at least half as bright as the brightest
/// well-exposed candidate, so a dark clip with one bright moment gets that moment.
///
/// Candidates arrive in time order and a later one can raise the brightness bar, so the decision
/// is made at the end from a few kept frames: those no other kept frame beats on both brightness
/// and score, at most ``capacity`` (the darkest go first; the brightest is always kept).
struct PosterPicker {
    struct Candidate {
        var frame: Frame
        var seconds: Double
        var brightness: Double
        var score: Double
    }

    static let capacity = 4
    /// Above this mean luma (8-bit) a frame is overexposed: it does not set the brightness bar.
    static let overexposed = 224.0
    /// A later frame must beat an earlier one by this much to replace it (ties go to the earlier).
    static let margin = 4.0

    private(set) var kept: [Candidate] = []
    private var brightestExposed: Double?
    private var brightest = -Double.infinity

    /// Score of a frame from its luma statistics (8-bit): the 10–90 % spread, penalised for
    /// frames that are nearly black or white on average.
    static func score(yLow: Double, yHigh: Double, yAverage: Double) -> Double {
        let spread = yHigh - yLow
        let exposurePenalty = yAverage < 32 || yAverage > overexposed ? 200.0 : 0
        return spread - exposurePenalty
    }

    /// The least mean luma a poster may have: half the brightest well-exposed candidate's
    /// (the brightest candidate's when every one is overexposed).
    var brightnessBar: Double { 0.5 * (brightestExposed ?? brightest) }

    /// Considers `frame` (kept by reference if it may win), scored by the `signalstats` metadata
    /// of `statistics`, a smaller copy of it.
    mutating func consider(_ frame: Frame, statistics: Frame, seconds: Double) {
        let stat = { (key: String) in statistics.metadata("lavfi.signalstats.\(key)").flatMap(Double.init) }
        let low = stat("YLOW") ?? 0, high = stat("YHIGH") ?? 0, average = stat("YAVG") ?? 0
        add(Candidate(frame: frame.reference(), seconds: seconds, brightness: average,
                      score: Self.score(yLow: low, yHigh: high, yAverage: average)))
    }

    /// Keeps `candidate` unless a kept frame is at least as bright and scores at least as well.
    mutating func add(_ candidate: Candidate) {
        brightest = max(brightest, candidate.brightness)
        if candidate.brightness <= Self.overexposed { brightestExposed = max(brightestExposed ?? 0, candidate.brightness) }
        let bar = brightnessBar
        kept.removeAll { $0.brightness < bar || ($0.brightness <= candidate.brightness && candidate.score > $0.score + Self.margin) }
        guard candidate.brightness >= bar,
              !kept.contains(where: { $0.brightness >= candidate.brightness && $0.score + Self.margin >= candidate.score }) else { return }
        kept.append(candidate)
        if kept.count > Self.capacity, let darkest = kept.indices.min(by: { kept[$0].brightness < kept[$1].brightness }) {
            kept.remove(at: darkest)
        }
    }

    /// The poster: the best-scoring kept candidate bright enough (ties to the earliest).
    var best: Candidate? {
        let bar = brightnessBar
        return kept.filter { $0.brightness >= bar }.sorted { $0.seconds < $1.seconds }
            .reduce(nil) { (best: Candidate?, next) in
                guard let best else { return next }
                return next.score > best.score + Self.margin ? next : best
            }
    }
}
