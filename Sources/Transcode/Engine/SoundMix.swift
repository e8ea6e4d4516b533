internal import CFFmpeg

/// The one mix shared by every rung: clip sound and music → the mix graph (gains, `amerge`,
/// loudness) → one AAC encode per sound bitrate of the ladder (each mixed frame goes to every
/// encoder), whose packets go downstream to the rungs that carry that bitrate. Inputs arrive
/// already at the output rate and layout, stamped in samples from the start of the timeline.
final class SoundMix {
    private let plan: TranscodePlan
    /// By bitrate (kbit/s).
    let encoders: [Int: Encoder]
    private let graph: FilterGraph
    private let inputs: (clipSound: Int?, music: Int?)
    private let frame = Frame()
    private let packet = Packet()
    private(set) var samplesOut: Int64 = 0
    /// Where the packets go (set once the rungs exist: they need the encoders first).
    var downstream: [RungEncoder] = []

    init(plan: TranscodePlan) throws {
        self.plan = plan
        var encoders: [Int: Encoder] = [:]
        for kbps in plan.audioBitratesKbps { encoders[kbps] = try EncoderFactory.audio(plan.audio, kbps: kbps) }
        self.encoders = encoders
        let frameSize = encoders.values.first?.frameSize ?? 1024
        inputs = plan.mixInputs
        let source = FilterGraph.Source.planarStereo(sampleRate: plan.audio.sampleRate)
        let count = [inputs.clipSound, inputs.music].compactMap { $0 }.count
        graph = try FilterGraph(description: plan.audioFilterGraph, sources: Array(repeating: source, count: count),
                                sinks: ["abuffersink"])
        graph.setFrameSize(0, samples: frameSize)
    }

    var secondsOut: Double { Double(samplesOut) / Double(plan.audio.sampleRate) }

    /// Feeds the clips' sound (only when the plan mixes it).
    func pushClipSound(_ frame: Frame) throws {
        guard let index = inputs.clipSound else { return }
        try graph.push(frame, into: index)
    }

    /// Feeds the music.
    func pushMusic(_ frame: Frame) throws {
        guard let index = inputs.music else { return }
        try graph.push(frame, into: index)
    }

    /// Ends every input at `samples` (the graph keeps producing silence after it).
    func closeInputs(at samples: Int64) throws {
        for index in [inputs.clipSound, inputs.music].compactMap({ $0 }) { try graph.close(index, at: samples) }
    }

    /// Encodes audio up to `seconds`. With `exact`, the last frame is cut so audio ends there.
    func encode(upTo seconds: Double, exact: Bool) throws {
        let target = Int64((seconds * Double(plan.audio.sampleRate)).rounded())
        while samplesOut < target, try graph.pull(0, into: frame) == .ready {
            if exact, samplesOut + Int64(frame.sampleCount) > target {
                frame.sampleCount = Int(target - samplesOut)
            }
            frame.pts = samplesOut
            samplesOut += Int64(frame.sampleCount)
            for (kbps, encoder) in encoders {
                try encoder.send(frame)
                try drain(encoder, kbps: kbps)
            }
        }
    }

    /// Drains the encoders at end of stream.
    func finish() throws {
        for (kbps, encoder) in encoders {
            try encoder.send(nil)
            try drain(encoder, kbps: kbps)
        }
    }

    /// Hands every packet of `encoder` to each rung carrying `kbps` (each gets its own reference).
    private func drain(_ encoder: Encoder, kbps: Int) throws {
        let rungs = downstream.filter { $0.rung.audioBitrateKbps == kbps }
        while try encoder.receive(into: packet) == .ready {
            for rung in rungs { try rung.submit(.audio(packet.reference())) }
        }
    }
}
