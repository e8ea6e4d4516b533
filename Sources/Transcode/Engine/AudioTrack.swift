internal import CFFmpeg

/// The single audio encode shared by every rung: decoded source audio (or generated silence)
/// → resample/pad graph → AAC. It is pulled in step with the video so the muxers can interleave,
/// and trimmed to the exact video length at the end.
final class AudioTrack {
    private let plan: TranscodePlan
    let encoder: Encoder
    private var graph: FilterGraph?
    private let frame = Frame()
    private let packet = Packet()
    private var samplesOut: Int64 = 0
    private var lastInputEnd: Int64 = 0
    private(set) var framesIn = 0

    init(plan: TranscodePlan) throws {
        self.plan = plan
        encoder = try EncoderFactory.audio(plan.audio)
        if !plan.audio.fromSource { graph = try makeGraph(source: nil) }
    }

    var secondsOut: Double { Double(samplesOut) / Double(plan.audio.sampleRate) }

    private func makeGraph(source: Frame?) throws -> FilterGraph {
        var sources: [FilterGraph.Source] = []
        var description = plan.audioFilterGraph
        if let source {
            let f = source.pointer.pointee
            var layout = [CChar](repeating: 0, count: 64)
            cff_frame_layout_describe(source.pointer, &layout, layout.count)
            let format = av_get_sample_fmt_name(AVSampleFormat(rawValue: f.format)).map { String(cString: $0) } ?? "fltp"
            sources = [FilterGraph.Source(filter: "abuffer", arguments:
                "time_base=\(f.time_base.num)/\(f.time_base.den):sample_rate=\(f.sample_rate):sample_fmt=\(format):channel_layout=\(String(cString: layout))")]
        } else {
            var silent = plan
            silent.audio.fromSource = false
            description = silent.audioFilterGraph
        }
        let graph = try FilterGraph(description: description, sources: sources, sinks: ["abuffersink"])
        graph.setFrameSize(0, samples: encoder.frameSize)
        return graph
    }

    /// Feeds one decoded source frame whose pts is already rebased to the presentation start.
    func push(_ decoded: Frame, timeBase: AVRational) throws {
        decoded.pointer.pointee.time_base = timeBase
        if graph == nil { graph = try makeGraph(source: decoded) }
        try graph!.push(decoded)
        framesIn += 1
        lastInputEnd = decoded.pointer.pointee.pts + av_rescale_q(
            Int64(decoded.pointer.pointee.nb_samples), AVRational(num: 1, den: decoded.pointer.pointee.sample_rate), timeBase)
    }

    /// Ends the source input (the graph keeps producing silence after it).
    func closeInput() throws {
        if framesIn > 0 { try graph?.close(at: lastInputEnd) }
    }

    /// Encodes audio up to `seconds`. With `exact`, the last frame is cut so audio ends there.
    func encode(upTo seconds: Double, exact: Bool, into rungs: [RungEncoder]) throws {
        if graph == nil {
            guard exact else { return }  // source audio has not started yet
            graph = try makeGraph(source: nil)  // an audio stream that never decoded: use silence
        }
        let target = Int64((seconds * Double(plan.audio.sampleRate)).rounded())
        while samplesOut < target, try graph!.pull(0, into: frame) == .ready {
            let count = Int64(frame.pointer.pointee.nb_samples)
            if exact, samplesOut + count > target {
                frame.pointer.pointee.nb_samples = Int32(target - samplesOut)
            }
            frame.pointer.pointee.pts = samplesOut
            samplesOut += Int64(frame.pointer.pointee.nb_samples)
            try encoder.send(frame)
            try drain(into: rungs)
        }
    }

    /// Drains the encoder at end of stream.
    func finish(into rungs: [RungEncoder]) throws {
        try encoder.send(nil)
        try drain(into: rungs)
    }

    /// Hands every encoded packet to every rung (each gets its own reference).
    private func drain(into rungs: [RungEncoder]) throws {
        while try encoder.receive(into: packet) == .ready {
            for rung in rungs { try rung.submit(.audio(packet.reference())) }
        }
    }
}
