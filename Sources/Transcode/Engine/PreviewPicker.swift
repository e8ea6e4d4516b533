/// Chooses the preview loop while decoding: the run of `length` consecutive preview frames with
/// the most motion (the sum of `scdet`'s mafd, each frame's mean absolute difference from the one
/// before), the earliest unless a later run is clearly busier. Holds at most two runs.
struct PreviewPicker {
    let length: Int
    private var window: [(frame: Frame, seconds: Double, change: Double)] = []
    private(set) var best: [Frame] = []
    private(set) var bestStartSeconds = 0.0
    private var bestActivity = -Double.infinity

    init(length: Int) { self.length = max(1, length) }

    /// Activity of a run: the changes inside it (the first frame's change is from outside).
    static func activity(_ changes: some Collection<Double>) -> Double { changes.dropFirst().reduce(0, +) }

    mutating func consider(_ frame: Frame, seconds: Double) {
        let change = frame.metadata("lavfi.scd.mafd").flatMap(Double.init) ?? 0
        window.append((frame.reference(), seconds, change))
        if window.count > length { window.removeFirst() }
        let activity = Self.activity(window.map(\.change))
        // Until the first full run the loop is simply everything so far (a short video's whole length).
        if best.count < length || activity > bestActivity * 1.1 {
            best = window.map(\.frame)
            bestStartSeconds = window[0].seconds
            bestActivity = activity
        }
    }
}
