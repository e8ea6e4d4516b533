internal import CFFmpeg

/// A muxer writing one output. Owns its `AVFormatContext` and, when it opened one, the I/O.
///
/// Lifecycle: add streams, ``writeHeader(options:)``, ``write(_:stream:timeBase:clearKeyframe:)``
/// any number of times, then the consuming ``finish()``, which writes the trailer and closes the
/// file; the compiler rejects any use after it. A context dropped without `finish` (the job failed)
/// is still closed and freed, exactly once, by `deinit`.
struct OutputContext: ~Copyable {
    let path: String
    private var context: UnsafeMutablePointer<AVFormatContext>?
    private var ownsIO = false
    private var headerWritten = false
    private let scratch = Packet()
    /// The first write error of a file the muxer opened and closed itself (see ``init``).
    private let ioError: UnsafeMutablePointer<Int32>
    /// With `durableFiles`: where the muxer's own files are made whole before they appear.
    private let durable: DurableFiles?

    /// `durableFiles`: the files the muxer opens itself (an HLS init section and segments) appear
    /// only whole and flushed, and are listed there as they land (``DurableFiles``).
    init(format: String, path: String, durableFiles: DurableFiles? = nil) throws {
        self.path = path
        var ctx: UnsafeMutablePointer<AVFormatContext>? = nil
        let result = avformat_alloc_output_context2(&ctx, nil, format, path)
        guard result >= 0, let ctx else {
            throw TranscodeError.internalFailure("muxer \(format) for \(path): \(AVResult.message(result))")
        }
        context = ctx
        ioError = .allocate(capacity: 1)  // after the guard: a muxer that cannot be made leaves nothing
        ioError.initialize(to: 0)
        // Muxers that open their own files (hls: segments, playlists) drop close errors.
        if let files = durableFiles {
            cff_durable_files(ctx, files.io)
            durable = files
        } else {
            cff_keep_io_errors(ctx, ioError)
            durable = nil
        }
    }

    /// The first write error of a file the muxer wrote itself, 0 when none.
    private var firstIOError: Int32 { durable?.error ?? ioError.pointee }

    deinit {
        if ownsIO, let ctx = context { avio_closep(&ctx.pointee.pb) }
        avformat_free_context(context)
        ioError.deallocate()
    }

    private var ctx: UnsafeMutablePointer<AVFormatContext> { context! }

    /// Adds a stream fed by `encoder`, with the sample entry `tag` (four characters, e.g. `hvc1`)
    /// instead of the muxer's default; returns its index.
    @discardableResult
    func addStream(from encoder: Encoder, tag: String? = nil) throws -> Int {
        try addStream(timeBase: encoder.timeBase) { parameters in
            let filled = avcodec_parameters_from_context(parameters, encoder.ctx)
            if let tag { parameters.pointee.codec_tag = tag.utf8.reversed().reduce(0) { $0 << 8 | UInt32($1) } }
            return filled
        }
    }

    /// Adds a stream whose packets are copied from an input stream as they are; returns its index.
    @discardableResult
    func addStream(copying parameters: StreamParameters) throws -> Int {
        try addStream(timeBase: parameters.timeBase) { avcodec_parameters_copy($0, parameters.pointer) }
    }

    private func addStream(timeBase: AVRational, fill: (UnsafeMutablePointer<AVCodecParameters>) -> Int32) throws -> Int {
        guard let stream = avformat_new_stream(ctx, nil) else { throw TranscodeError.internalFailure("avformat_new_stream") }
        let filled = fill(stream.pointee.codecpar)
        guard filled >= 0 else { throw TranscodeError.internalFailure("codec parameters: \(AVResult.message(filled))") }
        stream.pointee.time_base = timeBase
        return Int(stream.pointee.index)
    }

    /// Opens the file (unless the muxer does its own I/O) and writes the header.
    /// Options the muxer did not consume are an error, so a misspelt option cannot pass silently.
    mutating func writeHeader(options: [String: String]) throws {
        if ctx.pointee.oformat.pointee.flags & cff_fmt_nofile() == 0 {
            let opened = avio_open(&ctx.pointee.pb, path, AVIO_FLAG_WRITE)
            guard opened >= 0 else { throw TranscodeError.outputFailed(path: path, reason: AVResult.message(opened)) }
            ownsIO = true
        }
        let dictionary = OptionDictionary(options)
        let written = avformat_write_header(ctx, &dictionary.pointer)
        guard written >= 0 else { throw outputError(written) }
        headerWritten = true
        guard dictionary.leftover.isEmpty else {
            throw TranscodeError.internalFailure("muxer for \(path) ignored options: \(dictionary.leftover.joined(separator: ", "))")
        }
    }

    /// Writes a new reference to `packet` to `stream`, rescaled from `timeBase` to the stream's
    /// time base (read after the header, since the muxer may change it).
    func write(_ packet: Packet, stream: Int, timeBase: AVRational, clearKeyframe: Bool = false) throws {
        av_packet_ref(scratch.pointer, packet.pointer)
        scratch.pointer.pointee.stream_index = Int32(stream)
        if clearKeyframe { scratch.pointer.pointee.flags &= ~cff_pkt_flag_key() }
        av_packet_rescale_ts(scratch.pointer, timeBase, ctx.pointee.streams[stream]!.pointee.time_base)
        let result = av_interleaved_write_frame(ctx, scratch.pointer)
        guard result >= 0 else { throw outputError(result) }
        guard firstIOError == 0 else { throw outputError(firstIOError) }
    }

    /// Flushes interleaving queues, writes the trailer, closes the file and frees the context.
    consuming func finish() throws {
        var result = headerWritten ? av_write_trailer(ctx) : 0
        if ownsIO {
            let closed = avio_closep(&ctx.pointee.pb)
            if result >= 0 { result = closed }
            ownsIO = false
        }
        if result >= 0 { result = firstIOError }
        avformat_free_context(context)
        context = nil
        guard result >= 0 else { throw outputError(result) }
    }

    private func outputError(_ code: Int32) -> TranscodeError {
        .outputFailed(path: path, reason: AVResult.message(code))
    }
}
