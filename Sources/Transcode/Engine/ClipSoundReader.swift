internal import CFFmpeg

/// One clip's sound, read by a demuxer of its own on the same file (every other stream
/// dropped), so that it can run ahead of the clip's video: demux → decode → the clip's sound
/// normalise graph (48 kHz stereo planar float from the clip's start, gaps filled). Each packet
/// is decoded once; the file is closed when the reader goes away.
final class ClipSoundReader {
    private let plan: TranscodePlan
    private let clip: PlannedClip
    private let input: InputContext
    private let stream: Int
    private let decoder: Decoder
    private var graph: FilterGraph?
    private let packet = Packet()
    private let decoded = Frame()
    private let output = Frame()
    private let offset: Int64
    private var lastEnd: Int64 = 0
    private var atEndOfFile = false
    private var damaged = 0

    /// Nil when the file has no sound stream. The sound is shifted like the clip's video (by its
    /// presentation start plus its trim start), so both begin at zero at the cut.
    init?(clip: PlannedClip, file: SourceFile, plan: TranscodePlan) throws {
        let input = try InputContext(file: file)
        guard let stream = input.bestStream(AVMEDIA_TYPE_AUDIO) else { return nil }
        input.readOnly(stream)
        self.plan = plan
        self.clip = clip
        self.stream = stream
        decoder = try Decoder(input: input, streamIndex: stream)
        let trim = Double(clip.startFrame) / Double(plan.frameRate)
        let start = input.startTime &+ Int64((trim * Double(cff_time_base())).rounded())
        offset = av_rescale_q(start, cff_time_base_q(), decoder.timeBase)
        if clip.startFrame > 0 { input.seek(toKeyFrameBefore: trim) }
        self.input = input
    }

    /// The next normalised sound frame (valid until the next call), or nil once the sound ends.
    func next() throws -> Frame? {
        while true {
            if let graph {
                switch try graph.pull(0, into: output) {
                case .ready: return output
                case .endOfStream: return nil
                case .needsInput: if atEndOfFile { return nil }
                }
            } else if atEndOfFile {
                return nil
            }
            try readPacket()
        }
    }

    private func readPacket() throws {
        guard try input.read(into: packet) else {
            atEndOfFile = true
            try decoder.send(nil)
            try receive()
            try graph?.close(at: lastEnd)
            return
        }
        guard packet.streamIndex == stream else { return }
        if !(try decoder.send(packet)) { damaged += 1 }
        try receive()
    }

    private func receive() throws {
        let end = try decoder.receiveAudio(into: decoded, offset: offset, damaged: &damaged) { frame in
            if graph == nil { graph = try FilterGraph.audio(description: plan.clipAudioFilter(clip), firstFrame: frame) }
            try graph!.push(frame)
        }
        if let end { lastEnd = end }
    }
}
