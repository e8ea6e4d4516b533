internal import CFFmpeg

/// The sound track, decoded once up front from its offset into memory (at most the longest
/// video the preset allows, so a long or lying file costs no more), then handed out by sample
/// position: looped when the upload asks for it, silence after its end otherwise.
final class MusicTrack {
    private let samples: AudioFIFO
    private let loop: Bool

    init(music: PlannedMusic, file: SourceFile, plan: TranscodePlan) throws {
        let path = file.path
        samples = AudioFIFO(sampleRate: plan.audio.sampleRate, channels: plan.audio.channels)
        loop = music.loop
        let input = try InputContext(file: file)
        guard let stream = input.bestStream(AVMEDIA_TYPE_AUDIO) else { throw TranscodeError.noAudioStream(path: path) }
        let decoder = try Decoder(input: input, streamIndex: stream)
        let offset = av_rescale_q(input.startTime, cff_time_base_q(), decoder.timeBase)
        let wanted = Int((plan.admission.limits.maxDurationSeconds + 1) * Double(plan.audio.sampleRate))
        let packet = Packet(), decoded = Frame(), normalised = Frame()
        var graph: FilterGraph?
        var damaged = 0, lastEnd: Int64 = 0

        func drain() throws {
            guard let graph else { return }
            while samples.count < wanted, try graph.pull(0, into: normalised) == .ready { try samples.write(normalised) }
        }
        func receive() throws {
            let end = try decoder.receiveAudio(into: decoded, offset: offset, damaged: &damaged) { frame in
                if graph == nil { graph = try FilterGraph.audio(description: plan.musicFilter!, firstFrame: frame) }
                try graph!.push(frame)
                try drain()
            }
            if let end { lastEnd = end }
        }
        while samples.count < wanted, try input.read(into: packet) {
            guard packet.streamIndex == stream else { continue }
            if !(try decoder.send(packet)) { damaged += 1 }
            try receive()
        }
        if samples.count < wanted {
            try decoder.send(nil)
            try receive()
            try graph?.close(at: lastEnd)
            try drain()
        }
        guard samples.count > 0 else {
            let detail = graph == nil ? "no decodable audio (\(damaged) damaged packets)"
                : String(format: "offset %.3f s is at or past the end of the track", music.offsetSeconds)
            throw graph == nil ? TranscodeError.corruptInput(path: path, detail: detail)
                : TranscodeError.badTrim(path: path, detail: detail)
        }
    }

    /// The track's samples from `position` on (at most `count`, at most 4096 per frame), stamped `position`.
    func frame(at position: Int64, count wanted: Int64) throws -> Frame {
        let length = Int64(samples.count)
        let size = Int(min(wanted, 4096))
        if loop {
            let start = position % length
            return try samples.peek(Int(min(Int64(size), length - start)), at: Int(start), pts: position)
        }
        guard position < length else { return try samples.silence(size, pts: position) }
        return try samples.peek(Int(min(Int64(size), length - position)), at: Int(position), pts: position)
    }
}
