import Foundation
internal import CFFmpeg

/// One rung of the ladder on its own thread: libx264 → its fMP4 HLS muxer (and, for the top
/// rung, the progressive MP4) — or, for a passed-through top rung, the upload's own H.264 packets
/// → the same muxers. The pipeline hands it frames (or packets) and the shared audio packets
/// through a bounded queue; the rung's encoder and muxers are touched by that thread only.
final class RungEncoder: @unchecked Sendable {
    /// Where the rung's video comes from.
    enum Source {
        /// Frames from the fan-out graph, encoded by libx264.
        case encode
        /// The upload's packets, copied (timestamps from 0, in the stream's time base).
        case copy(StreamParameters)
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
    private let encoder: Encoder?
    private let videoTimeBase: AVRational
    private let plan: TranscodePlan
    private var hls: OutputContext?
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
    private let audioTimeBase: AVRational

    /// Opens the encoder and muxers and writes their headers; call ``start()`` to begin.
    /// `threads` is libx264's thread count (ignored when copying).
    init(rung: TranscodePlan.PlannedRung, source: Source, threads: Int, plan: TranscodePlan, layout: OutputLayout,
         audioEncoder: Encoder, writesMP4: Bool) throws {
        self.rung = rung
        self.plan = plan
        var videoEncoder: Encoder?
        switch source {
        case .encode:
            let encoder = try withThreadName("x264 \(rung.name)") {
                try EncoderFactory.video(rung, plan: plan, threads: threads)
            }
            videoEncoder = encoder
            videoTimeBase = encoder.timeBase
            codecString = EncoderFactory.codecString(avcC: encoder.extradata)
        case .copy(let parameters):
            videoTimeBase = parameters.timeBase
            codecString = EncoderFactory.codecString(avcC: parameters.extradata)
        }
        encoder = videoEncoder
        audioTimeBase = audioEncoder.timeBase
        func addVideo(_ output: borrowing OutputContext) throws {
            switch source {
            case .encode: try output.addStream(from: videoEncoder!)
            case .copy(let parameters): try output.addStream(copying: parameters)
            }
        }
        var hls = try OutputContext(format: "hls", path: layout.playlist(rung))
        try addVideo(hls)
        try hls.addStream(from: audioEncoder)
        // Segment cuts are decided by the plan, not by the muxer's clock: only packets that
        // start a planned segment keep their keyframe flag on the way in (see `write`), and
        // hls_time is shorter than any planned segment, so the muxer cuts at each of them.
        try hls.writeHeader(options: [
            "hls_time": "0.1",
            "hls_list_size": "0",
            "hls_playlist_type": "vod",
            "hls_segment_type": "fmp4",
            "hls_flags": "independent_segments",
            "hls_segment_filename": layout.segmentPattern(rung),
            "hls_fmp4_init_filename": OutputLayout.initSegmentName,
        ])
        self.hls = consume hls
        if writesMP4 {
            var mp4 = try OutputContext(format: "mp4", path: layout.mp4)
            try addVideo(mp4)
            try mp4.addStream(from: audioEncoder)
            try mp4.writeHeader(options: ["movflags": "+faststart"])
            self.mp4 = consume mp4
        } else {
            mp4 = nil
        }
    }

    func start() {
        done.enter()
        startThread(named: "rung \(rung.name)") { [self] in run() }
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
            }
            if case .end = item { break }
            if case .abandon = item { break }
        }
        done.leave()
    }

    private func handle(_ item: Item) throws {
        switch item {
        case .frame(let frame):
            guard let encoder else { throw TranscodeError.internalFailure("frame sent to a copied rung") }
            try encoder.send(frame)
            try drain(encoder)
        case .packet(let packet):
            try write(packet)
        case .audio(let audio):
            try hls?.write(audio, stream: 1, timeBase: audioTimeBase)
            try mp4?.write(audio, stream: 1, timeBase: audioTimeBase)
        case .videoEnd:
            try endVideo()
        case .end:
            try endVideo()
            try hls.take()?.finish()
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

    private func drain(_ encoder: Encoder) throws {
        while try encoder.receive(into: packet) == .ready {
            packet.duration = 1  // constant frame rate: one tick of 1/frameRate
            try write(packet)
        }
    }

    /// Muxes one video packet; only the key frames that start a planned segment keep their flag
    /// on the way into the HLS muxer, so it cuts exactly there.
    private func write(_ packet: Packet) throws {
        let frame = Int(av_rescale_q(packet.pts, videoTimeBase, AVRational(num: 1, den: Int32(plan.frameRate))))
        if encoder == nil {
            // A copied packet is a key frame where the scan found an IDR, whatever the container's
            // sync-sample table says, so the cuts match the lower rungs'.
            packet.isKeyframe = plan.isKeyframe(frame: frame)
        }
        let clear = packet.isKeyframe && !plan.startsSegment(frame: frame)
        try hls?.write(packet, stream: 0, timeBase: videoTimeBase, clearKeyframe: clear)
        try mp4?.write(packet, stream: 0, timeBase: videoTimeBase)
    }
}
