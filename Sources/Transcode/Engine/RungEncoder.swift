import Foundation
internal import CFFmpeg

/// One rung of the ladder on its own thread: its encoder (libx264, libx265 or libsvtav1) → its
/// fMP4 HLS muxer (and, for the top H.264 rung, the progressive MP4) — or, for a passed-through
/// top rung, the upload's own H.264 packets → the same muxers. The pipeline hands it frames (or
/// packets) and the sound's packets through a bounded queue; the rung's encoder and muxers are
/// touched by that thread only.
final class RungEncoder: @unchecked Sendable {
    /// Where the rung's video comes from.
    enum Source {
        /// Frames from the fan-out graph, encoded by the rung's codec.
        case encode
        /// The upload's packets, copied (timestamps from 0, in the stream's time base).
        case copy(StreamParameters)
    }

    /// Where the rung's sound comes from.
    enum Sound {
        /// The mix's AAC encoder of the rung's bitrate (``SoundStage``), shared with other rungs.
        case encoded(Encoder)
        /// A published rung's AAC, packets copied as they are (``PublishedLadder``).
        case copied(StreamParameters)
    }

    enum Item {
        case frame(Frame)
        /// A copied video packet (``Source/copy(_:)`` only).
        case packet(Packet)
        case audio(Packet)
        /// No more video: the encoder drains now, while the sound may still come.
        case videoEnd
        /// Drain (if not yet) and write trailers.
        case end
        /// Stop without writing anything more (the job failed elsewhere).
        case abandon
    }

    let rung: TranscodePlan.PlannedRung
    /// RFC 6381 codec string of the rung's video.
    let codecString: String
    /// Frames the rung's video is decoded ahead of its presentation: the encoder's B-frame delay,
    /// or a copied stream's.
    let decodeDelayFrames: Int
    private var encoder: Encoder?
    /// The output frame the current encoder began at (SVT-AV1 restarts, see ``restartIfOffGrid(at:)``).
    private var encoderStart = 0
    private let threads: Int
    private let videoTimeBase: AVRational
    private let plan: TranscodePlan
    private var hls: OutputContext?
    /// The HLS muxer's init section and segments, each listed once whole.
    private let durable = DurableFiles()
    private let segments: RungSegments
    private var mp4: OutputContext?
    /// Eight items absorb the encoders' uneven cost per frame (an IDR costs several P-frames)
    /// without holding the pipeline back: 2 left the cores idle 2 % more of the time (measured).
    private let queue = HandoffQueue<Item>(capacity: 8)
    /// Left once, when the thread ends; waiting on it after that returns at once.
    private let done = DispatchGroup()
    private let lock = NSLock()
    private var failure: Error?
    private let packet = Packet()
    /// Set by the rung's thread when the video ends (``Item/videoEnd`` or ``Item/end``).
    private var videoEnded = false
    /// Set by the caller's thread in ``endInput()``.
    private var inputEnded = false
    /// The H.264 rung's decode delay in frames (B-frames), which this rung's video takes on (see
    /// ``write(_:)``); nil for the H.264 rungs themselves.
    private let alignsDelay: Int?
    /// Ticks every video dts is moved earlier, fixed at the first packet.
    private var dtsShift: Int64?
    /// Shared by the pipeline's AV1 rungs, which restart their encoders together.
    private let restarts: RestartBarrier?
    private let audioTimeBase: AVRational

    /// Opens the encoder and muxers and writes their headers; call ``start()`` to begin.
    /// `threads` is the encoder's thread count (ignored when copying).
    /// `alignsDelay`: the decode delay (frames) of the H.264 rung this one stands beside.
    /// `restarts`: for an AV1 rung, the barrier it shares with the pipeline's other AV1 rungs.
    /// `gate`: the ladder grows in view: the rung's playlist is an `EVENT` playlist written each
    /// time a segment lands, reported to the gate as rung `index`; without one it is written once,
    /// at the end (`VOD`).
    init(rung: TranscodePlan.PlannedRung, source: Source, threads: Int, plan: TranscodePlan, layout: OutputLayout,
         sound: Sound, writesMP4: Bool, alignsDelay: Int? = nil, restarts: RestartBarrier? = nil,
         gate: (PlayableGate, index: Int)? = nil) throws {
        self.rung = rung
        segments = RungSegments(plan: plan, path: layout.playlist(rung), growing: gate != nil) { seconds, ended in
            try gate?.0.rung(gate!.index, lists: seconds, ended: ended)
        }
        self.restarts = restarts
        self.alignsDelay = alignsDelay
        self.plan = plan
        self.threads = threads
        var videoEncoder: Encoder?
        let extradata: [UInt8]
        switch source {
        case .encode:
            let encoder = try Self.openEncoder(rung, plan: plan, threads: threads)
            videoEncoder = encoder
            videoTimeBase = encoder.timeBase
            extradata = encoder.extradata
            decodeDelayFrames = Int(encoder.ctx.pointee.has_b_frames)
        case .copy(let parameters):
            videoTimeBase = parameters.timeBase
            extradata = parameters.extradata
            decodeDelayFrames = Int(parameters.pointer.pointee.video_delay)
        }
        guard let codecString = EncoderFactory.codecString(rung.codec, extradata: extradata) else {
            throw TranscodeError.internalFailure("\(rung.directoryName): the encoder's headers give no codec string")
        }
        self.codecString = codecString
        encoder = videoEncoder
        func addVideo(_ output: borrowing OutputContext) throws {
            switch source {
            case .encode: try output.addStream(from: videoEncoder!, tag: rung.codec == .hevc ? "hvc1" : nil)
            case .copy(let parameters): try output.addStream(copying: parameters)
            }
        }
        func addSound(_ output: borrowing OutputContext) throws {
            switch sound {
            case .encoded(let encoder): try output.addStream(from: encoder)
            case .copied(let parameters): try output.addStream(copying: parameters)
            }
        }
        switch sound {
        case .encoded(let encoder): audioTimeBase = encoder.timeBase
        case .copied(let parameters): audioTimeBase = parameters.timeBase
        }
        // Init section and segments appear whole and flushed, never in the middle of a write; the
        // muxer's own playlist is dropped (``RungSegments`` writes it).
        var hls = try OutputContext(format: "hls", path: layout.playlist(rung), durableFiles: durable)
        try addVideo(hls)
        try addSound(hls)
        // Segment cuts are decided by the plan, not by the muxer's clock: only packets that
        // start a planned segment keep their keyframe flag on the way in (see `write`), and
        // hls_time is shorter than any planned segment, so the muxer cuts at each of them.
        // Copied sound arrives whole before the video: no interleaving deadline (FFmpeg's default
        // writes queued packets of one stream after 10 s of them, into the first segment).
        let interleaving = if case .copied = sound { ["max_interleave_delta": "0"] } else { [String: String]() }
        try hls.writeHeader(options: interleaving.merging([
            "hls_time": "0.1",
            "hls_list_size": "0",
            "hls_playlist_type": "vod",
            "hls_segment_type": "fmp4",
            "hls_flags": "independent_segments",
            "hls_segment_filename": layout.segmentPattern(rung),
            "hls_fmp4_init_filename": OutputLayout.initSegmentName,
        ]) { $1 })
        self.hls = consume hls
        if writesMP4 {
            var mp4 = try OutputContext(format: "mp4", path: layout.mp4)
            try addVideo(mp4)
            try addSound(mp4)
            try mp4.writeHeader(options: ["movflags": "+faststart"])
            self.mp4 = consume mp4
        } else {
            mp4 = nil
        }
    }

    /// The rung's encoder, its threads named after the rung (`x264 720p`, `x265 720p`, `svt 720p`).
    private static func openEncoder(_ rung: TranscodePlan.PlannedRung, plan: TranscodePlan, threads: Int) throws -> Encoder {
        let library = switch rung.codec { case .h264: "x264"; case .hevc: "x265"; case .av1: "svt" }
        return try withThreadName("\(library) \(rung.name)") {
            try EncoderFactory.video(rung, plan: plan, threads: threads)
        }
    }

    func start() {
        done.enter()
        startThread(named: "rung \(rung.directoryName)") { [self] in run() }
    }

    /// Queues a frame (pts = output frame number) or an audio packet; throws the rung's failure.
    func submit(_ item: Item) throws {
        if let failure = currentFailure { throw failure }
        queue.put(item)
    }

    /// Ends the rung's input: its thread drains the encoder and writes the trailers while the
    /// caller goes on (every rung flushes at once, beside the thumbnails). Call once.
    func endInput() {
        guard !inputEnded else { return }
        inputEnded = true
        queue.put(.end)
    }

    /// Waits for the drain and trailers (ending the input first if ``endInput()`` was not
    /// called); throws the rung's failure.
    func finish() throws {
        endInput()
        done.wait()
        if let failure = currentFailure { throw failure }
    }

    /// Stops the thread without finishing the outputs; never throws. A rung whose thread has
    /// already ended (finished, or abandoned before) returns at once; one whose input has already
    /// ended is waited for (it drains and writes its trailers into the abandoned directory).
    func abandon() {
        guard done.wait(timeout: .now()) == .timedOut else { return }
        restarts?.breakAll(TranscodeError.cancelled)  // a rung waiting for the others stops waiting
        queue.put(.abandon)
        done.wait()
    }

    private var currentFailure: Error? {
        lock.lock()
        defer { lock.unlock() }
        return failure
    }

    private func run() {
        while true {
            let item = queue.take()
            do {
                if currentFailure == nil { try handle(item) }
            } catch {
                lock.lock()
                failure = error
                lock.unlock()
                restarts?.breakAll(error)
            }
            if case .end = item { break }
            if case .abandon = item { break }
        }
        // SVT-AV1 encoders are freed one at a time (``RestartBarrier``).
        restarts?.alone { encoder = nil }
        done.leave()
    }

    private func handle(_ item: Item) throws {
        switch item {
        case .frame(let frame):
            if rung.codec == .av1 { try restartIfOffGrid(at: Int(frame.pts)) }
            guard let encoder else { throw TranscodeError.internalFailure("frame sent to a copied rung") }
            try encoder.send(frame)
            try drain(encoder)
        case .packet(let packet):
            try write(packet)
        case .audio(let audio):
            try hls?.write(audio, stream: 1, timeBase: audioTimeBase)
            try segments.landed(durable.takeLanded())  // the interleaver may release a cut here
            try mp4?.write(audio, stream: 1, timeBase: audioTimeBase)
        case .videoEnd:
            try endVideo()
        case .end:
            try endVideo()
            try hls.take()?.finish()
            try segments.landed(durable.takeLanded())
            try segments.finish()
            try mp4.take()?.finish()
        case .abandon:
            break
        }
    }

    private func endVideo() throws {
        guard !videoEnded else { return }
        videoEnded = true
        if let encoder {
            try encoder.send(nil)
            try drain(encoder)
        }
    }

    /// SVT-AV1 1.4 ignores forced keyframes and makes one every GOP from its first frame. When the
    /// plan wants a keyframe at `frame` off the current encoder's grid (the short first segments,
    /// or the grid again after them), the encoder is drained and a fresh one begins there: its
    /// first frame is a keyframe and its grid starts anew. Each restart writes the same sequence
    /// header (checked), so the stream stays one. Cost: ~0.2 CPU-s per restart at 1080p. The AV1
    /// rungs restart together, through ``RestartBarrier`` (SVT-AV1's process globals).
    private func restartIfOffGrid(at frame: Int) throws {
        guard encoder != nil, frame > encoderStart, plan.isKeyframe(frame: frame),
              (frame - encoderStart) % plan.gopFrames != 0 else { return }
        let header = encoder!.extradata
        guard let restarts else { throw TranscodeError.internalFailure("\(rung.directoryName): an AV1 rung with no restart barrier") }
        var next: Encoder?
        try restarts.restart(
            drain: { [self] in
                let current = encoder!
                try current.send(nil)
                try drain(current)
            },
            free: { [self] in encoder = nil },  // freed before any next one allocates its buffers
            open: { [self] in next = try Self.openEncoder(rung, plan: plan, threads: threads) })
        guard let next, next.extradata == header else {
            throw TranscodeError.internalFailure("\(rung.directoryName): a restarted AV1 encoder wrote another sequence header")
        }
        encoder = next
        encoderStart = frame
    }

    private func drain(_ encoder: Encoder) throws {
        while try encoder.receive(into: packet) == .ready {
            packet.duration = 1  // constant frame rate: one tick of 1/frameRate
            try write(packet)
        }
    }

    /// Muxes one video packet; only the key frames that start a planned segment keep their flag
    /// on the way into the HLS muxer, so it cuts exactly there.
    ///
    /// A rung beside an H.264 one (``alignsDelay``) has its decode times moved earlier by the
    /// delay it lacks (AV1 has no B-frame delay, x264's is 2 frames): each muxer moves the whole
    /// file later by its earliest decode time, so with equal delays both rungs' frames and sound
    /// land at the same instants, and a player switching between them sees one timeline.
    private func write(_ packet: Packet) throws {
        if let alignsDelay {
            if dtsShift == nil {
                // The first packet's dts is minus this rung's own delay.
                guard -packet.dts <= Int64(alignsDelay) else {
                    throw TranscodeError.internalFailure("\(rung.directoryName): decoded \(-packet.dts) frames ahead, more than "
                        + "the \(alignsDelay) of the H.264 rung it must start with")
                }
                dtsShift = Int64(alignsDelay) + packet.dts
            }
            packet.dts -= dtsShift!
        }
        let frame = Int(av_rescale_q(packet.pts, videoTimeBase, AVRational(num: 1, den: Int32(plan.frameRate))))
        if encoder == nil {
            // A copied packet is a key frame where the scan found an IDR, whatever the container's
            // sync-sample table says, so the cuts match the lower rungs'.
            packet.isKeyframe = plan.isKeyframe(frame: frame)
        }
        let startsSegment = plan.startsSegment(frame: frame)
        segments.video(frame: frame, startsSegment: packet.isKeyframe && startsSegment)
        try hls?.write(packet, stream: 0, timeBase: videoTimeBase, clearKeyframe: packet.isKeyframe && !startsSegment)
        try segments.landed(durable.takeLanded())
        try mp4?.write(packet, stream: 0, timeBase: videoTimeBase)
    }
}
