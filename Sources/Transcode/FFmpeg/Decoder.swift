internal import CFFmpeg

/// A decoder for one input stream. Owns its `AVCodecContext`.
final class Decoder {
    private var context: UnsafeMutablePointer<AVCodecContext>?
    let path: String
    /// Time base of the frames it returns (the stream's).
    let timeBase: AVRational

    init(input: borrowing InputContext, streamIndex: Int) throws {
        path = input.path
        let stream = input.stream(streamIndex)
        let parameters = stream.pointee.codecpar!
        timeBase = stream.pointee.time_base
        guard let codec = avcodec_find_decoder(parameters.pointee.codec_id) else {
            throw TranscodeError.unsupportedCodec(
                path: input.path, codec: String(cString: avcodec_get_name(parameters.pointee.codec_id)))
        }
        // Every stored property is set from here on, so `deinit` frees the context on every
        // failure path below.
        context = avcodec_alloc_context3(codec)
        guard let ctx = context else { throw TranscodeError.internalFailure("avcodec_alloc_context3") }
        guard avcodec_parameters_to_context(ctx, parameters) >= 0 else {
            throw TranscodeError.corruptInput(path: path, detail: "invalid codec parameters")
        }
        ctx.pointee.pkt_timebase = stream.pointee.time_base
        if parameters.pointee.codec_type == AVMEDIA_TYPE_VIDEO {
            ctx.pointee.framerate = av_guess_frame_rate(input.format, stream, nil)
        }
        // FFmpeg's choice (frame threads): one decode thread measured no faster on the ladder (#33).
        ctx.pointee.thread_count = 0
        let opened = avcodec_open2(ctx, codec, nil)
        guard opened >= 0 else {
            throw TranscodeError.corruptInput(path: path, detail: "cannot open decoder: \(AVResult.message(opened))")
        }
    }

    deinit { avcodec_free_context(&context) }

    /// Sends a packet, or nil to start draining. Returns false when the packet was rejected as
    /// invalid data (the caller counts it; one damaged packet does not end the job).
    @discardableResult
    func send(_ packet: Packet?) throws -> Bool {
        let result = avcodec_send_packet(context, packet?.pointer)
        if result >= 0 || result == AVResult.eof { return true }
        if result == cff_error_invaliddata() { return false }
        if result == AVResult.again {
            throw TranscodeError.internalFailure("decoder refused input before its output was drained")
        }
        throw TranscodeError.corruptInput(path: path, detail: "decode failed: \(AVResult.message(result))")
    }

    /// Receives the next decoded frame into `frame`. Invalid data inside a frame is reported as
    /// `.needsInput` with `damaged` incremented, so decoding continues like the ffmpeg CLI does.
    func receive(into frame: Frame, damaged: inout Int) throws -> StepResult {
        frame.unref()
        let result = avcodec_receive_frame(context, frame.pointer)
        if result == cff_error_invaliddata() {
            damaged += 1
            return .needsInput
        }
        return try AVResult.step(result) { .corruptInput(path: path, detail: "decode failed: \($0)") }
    }
}

extension Decoder {
    /// Receives every audio frame the decoder has ready, timed from `offset` (pts moved that many
    /// ticks earlier, in the decoder's time base; wrapping arithmetic, so no hostile timestamp can
    /// trap), skipping frames without a time or a rate; hands each to `body` and returns where the
    /// last one ends (nil when none came). Shared by the clips' sound and the sound track.
    func receiveAudio(into frame: Frame, offset: Int64, damaged: inout Int, _ body: (Frame) throws -> Void) throws -> Int64? {
        var end: Int64?
        while try receive(into: frame, damaged: &damaged) == .ready {
            guard let timestamp = frame.bestEffortTimestamp, frame.sampleRate > 0 else { continue }
            frame.pts = timestamp &- offset
            frame.timeBase = timeBase
            try body(frame)
            end = frame.pts &+ av_rescale_q(Int64(frame.sampleCount), AVRational(num: 1, den: Int32(frame.sampleRate)), timeBase)
        }
        return end
    }
}
