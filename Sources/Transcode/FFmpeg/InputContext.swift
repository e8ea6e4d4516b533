import Foundation
internal import CFFmpeg

/// Reads a ``SourceFile``'s descriptor for libavformat: an `AVIOContext` whose callbacks `pread`
/// the descriptor up to the size fixed when the file was validated. Owns the context, its
/// buffer and the callbacks' state, and frees them exactly once.
final class FileIO {
    let file: SourceFile
    private let state: UnsafeMutablePointer<cff_fd_source>
    private(set) var context: UnsafeMutablePointer<AVIOContext>?

    init(file: SourceFile) throws {
        self.file = file
        state = .allocate(capacity: 1)
        state.initialize(to: cff_fd_source(fd: file.descriptor, pos: 0, size: file.size))
        context = cff_fd_avio_alloc(state)
        guard context != nil else { throw TranscodeError.internalFailure("avio_alloc_context") }
    }

    deinit {
        cff_fd_avio_free(&context)
        state.deallocate()
    }
}

/// An opened demuxer. Owns the `AVFormatContext` and closes it exactly once; noncopyable, so
/// there is one owner (the pipeline) and everyone else borrows it.
struct InputContext: ~Copyable {
    let path: String
    private let io: FileIO
    private var context: UnsafeMutablePointer<AVFormatContext>?

    /// Opens `file` through its descriptor. The container is detected from the bytes and must be
    /// one ``ContainerPolicy`` allows; the demuxer cannot open any other input (every nested
    /// open fails), so a playlist or a reference inside the file reads nothing else.
    init(file: SourceFile) throws {
        let io = try FileIO(file: file)
        var detected: UnsafePointer<AVInputFormat>? = nil
        let probed = av_probe_input_buffer2(io.context, &detected, nil, nil, 0, 0)
        guard probed >= 0, let format = detected else {
            throw TranscodeError.cannotOpen(path: file.path, reason: AVResult.message(probed))
        }
        let name = String(cString: format.pointee.name)
        switch ContainerPolicy.verdict(forDemuxer: name) {
        case .allowed: break
        case .stillImage: throw TranscodeError.stillImage(path: file.path)
        case .refused: throw TranscodeError.unsupportedContainer(path: file.path, container: name)
        }
        guard let allocated = avformat_alloc_context() else { throw TranscodeError.internalFailure("avformat_alloc_context") }
        allocated.pointee.pb = io.context
        cff_forbid_nested_inputs(allocated)
        let options = OptionDictionary(["format_whitelist": name])
        var ctx: UnsafeMutablePointer<AVFormatContext>? = allocated
        let opened = avformat_open_input(&ctx, file.path, format, &options.pointer)
        guard opened >= 0, ctx != nil else {  // avformat_open_input freed the context
            throw TranscodeError.cannotOpen(path: file.path, reason: AVResult.message(opened))
        }
        let found = avformat_find_stream_info(ctx, nil)
        guard found >= 0 else {
            avformat_close_input(&ctx)
            throw TranscodeError.cannotOpen(path: file.path, reason: AVResult.message(found))
        }
        path = file.path
        self.io = io
        context = ctx
    }

    deinit {
        var owned = context
        avformat_close_input(&owned)  // custom I/O: the AVIOContext is left to `io`
    }

    var format: UnsafeMutablePointer<AVFormatContext> { context! }

    func stream(_ index: Int) -> UnsafeMutablePointer<AVStream> { format.pointee.streams[index]! }

    var streamCount: Int { Int(format.pointee.nb_streams) }
    /// Size of the opened file in bytes.
    var fileSize: Int64 { io.file.size }

    /// The best stream of a type (skipping cover art for video), or nil.
    func bestStream(_ type: AVMediaType) -> Int? {
        let index = av_find_best_stream(format, type, -1, -1, nil, 0)
        guard index >= 0 else { return nil }
        if type == AVMEDIA_TYPE_VIDEO,
           stream(Int(index)).pointee.disposition & cff_disposition_attached_pic() != 0 {
            return nil
        }
        return Int(index)
    }

    /// Reads only stream `index` from now on: the demuxer drops every other stream's packets
    /// (MP4 and MOV skip their bytes without reading them).
    func readOnly(_ index: Int) {
        for other in 0..<streamCount where other != index { stream(other).pointee.discard = AVDISCARD_ALL }
    }

    /// Start of the presentation in `AV_TIME_BASE` units (the earliest stream start), 0 when unknown.
    var startTime: Int64 {
        let start = format.pointee.start_time
        return start == cff_nopts() ? 0 : start
    }

    /// Moves to the last key frame at or before `seconds` of presentation time (from the start),
    /// so a trimmed clip is not decoded from its beginning. False when the demuxer cannot seek;
    /// reading then simply continues from where it was.
    @discardableResult
    func seek(toKeyFrameBefore seconds: Double) -> Bool {
        let target = startTime &+ Int64((seconds * Double(cff_time_base())).rounded())
        return av_seek_frame(format, -1, target, AVSEEK_FLAG_BACKWARD) >= 0
    }

    /// Reads the next packet; returns false at end of file.
    func read(into packet: Packet) throws -> Bool {
        packet.unref()
        let result = av_read_frame(format, packet.pointer)
        if result == AVResult.eof { return false }
        if result < 0 {
            throw TranscodeError.corruptInput(path: path, detail: "read failed: \(AVResult.message(result))")
        }
        return true
    }
}
