import Foundation
internal import CFFmpeg

/// One rung of the ladder on its own thread: libx264 → its fMP4 HLS muxer (and, for the top
/// rung, the progressive MP4). The pipeline hands it frames and the shared audio packets through
/// a bounded queue; the rung's encoder and muxers are touched by that thread only.
final class RungEncoder: @unchecked Sendable {
    enum Item {
        case frame(Frame)
        case audio(Packet)
        /// Drain and write trailers.
        case end
        /// Stop without writing anything more (the job failed elsewhere).
        case abandon
    }

    let rung: TranscodePlan.PlannedRung
    let encoder: Encoder
    private let plan: TranscodePlan
    private var hls: OutputContext?
    private var mp4: OutputContext?
    private let queue = HandoffQueue<Item>(capacity: 2)
    /// Left once, when the thread ends; waiting on it after that returns at once.
    private let done = DispatchGroup()
    private let lock = NSLock()
    private var failure: Error?
    private let packet = Packet()
    private let audioTimeBase: AVRational

    /// Opens the encoder and muxers and writes their headers; call ``start()`` to begin.
    init(rung: TranscodePlan.PlannedRung, plan: TranscodePlan, layout: OutputLayout, audioEncoder: Encoder,
         writesMP4: Bool) throws {
        self.rung = rung
        self.plan = plan
        encoder = try EncoderFactory.video(rung, plan: plan, threads: 0)
        audioTimeBase = audioEncoder.timeBase
        var hls = try OutputContext(format: "hls", path: layout.playlist(rung))
        try hls.addStream(from: encoder)
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
            try mp4.addStream(from: encoder)
            try mp4.addStream(from: audioEncoder)
            try mp4.writeHeader(options: ["movflags": "+faststart"])
            self.mp4 = consume mp4
        } else {
            mp4 = nil
        }
    }

    func start() {
        done.enter()
        let thread = Thread { [self] in run() }
        thread.name = "ingestd.rung.\(rung.name)"
        thread.start()
    }

    /// Queues a frame (pts = output frame number) or an audio packet; throws the rung's failure.
    func submit(_ item: Item) throws {
        if let failure = currentFailure { throw failure }
        queue.put(item)
    }

    /// Drains the encoder, writes the trailers and waits for the thread to end.
    func finish() throws {
        queue.put(.end)
        done.wait()
        if let failure = currentFailure { throw failure }
    }

    /// Stops the thread without finishing the outputs; never throws. A rung whose thread has
    /// already ended (finished, or abandoned before) returns at once.
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
            try encoder.send(frame)
            try drain()
        case .audio(let audio):
            try hls?.write(audio, stream: 1, timeBase: audioTimeBase)
            try mp4?.write(audio, stream: 1, timeBase: audioTimeBase)
        case .end:
            try encoder.send(nil)
            try drain()
            try hls.take()?.finish()
            try mp4.take()?.finish()
        case .abandon:
            break
        }
    }

    private func drain() throws {
        while try encoder.receive(into: packet) == .ready {
            packet.pointer.pointee.duration = 1  // constant frame rate: one tick of 1/frameRate
            let frame = Int(packet.pointer.pointee.pts)
            let clear = packet.isKeyframe && !plan.startsSegment(frame: frame)
            try hls?.write(packet, stream: 0, timeBase: encoder.timeBase, clearKeyframe: clear)
            try mp4?.write(packet, stream: 0, timeBase: encoder.timeBase)
        }
    }
}
