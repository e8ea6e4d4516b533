import Foundation
internal import CFFmpeg

/// An opened demuxer. Owns the `AVFormatContext` and closes it exactly once; noncopyable, so
/// there is one owner (the pipeline) and everyone else borrows it.
struct InputContext: ~Copyable {
    let path: String
    private var context: UnsafeMutablePointer<AVFormatContext>?

    /// Opens `path` for reading. Only the `file` protocol is allowed, so a hostile container
    /// (a playlist, a concat list) cannot make FFmpeg reach the network or other files.
    init(path: String) throws {
        self.path = path
        var options: OpaquePointer? = nil
        av_dict_set(&options, "protocol_whitelist", "file", 0)
        defer { av_dict_free(&options) }
        var ctx: UnsafeMutablePointer<AVFormatContext>? = nil
        let opened = avformat_open_input(&ctx, path, nil, &options)
        guard opened >= 0, let ctx else {
            throw TranscodeError.cannotOpen(path: path, reason: AVResult.message(opened))
        }
        context = ctx
        let found = avformat_find_stream_info(ctx, nil)
        guard found >= 0 else {
            throw TranscodeError.cannotOpen(path: path, reason: AVResult.message(found))
        }
    }

    deinit {
        var owned = context
        avformat_close_input(&owned)
    }

    var format: UnsafeMutablePointer<AVFormatContext> { context! }

    func stream(_ index: Int) -> UnsafeMutablePointer<AVStream> { format.pointee.streams[index]! }

    var streamCount: Int { Int(format.pointee.nb_streams) }

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

    /// Start of the presentation in seconds (the earliest stream start), 0 when unknown.
    var startSeconds: Double {
        let start = format.pointee.start_time
        return start == cff_nopts() ? 0 : Double(start) / Double(cff_time_base())
    }

    /// Moves to the last key frame at or before `seconds` of presentation time (from the start),
    /// so a trimmed clip is not decoded from its beginning. False when the demuxer cannot seek;
    /// reading then simply continues from where it was.
    @discardableResult
    func seek(toKeyFrameBefore seconds: Double) -> Bool {
        let target = Int64(((startSeconds + seconds) * Double(cff_time_base())).rounded())
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

    /// Copies the stream layout out as values.
    func probe() -> SourceProbe {
        let fmt = format.pointee
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value ?? 0
        let duration = fmt.duration == cff_nopts() ? 0 : Double(fmt.duration) / Double(cff_time_base())
        let videoIndex = bestStream(AVMEDIA_TYPE_VIDEO), audioIndex = bestStream(AVMEDIA_TYPE_AUDIO)
        return SourceProbe(
            path: path,
            container: fmt.iformat.map { String(cString: $0.pointee.name) } ?? "unknown",
            durationSeconds: max(0, duration),
            sizeBytes: size,
            streamCount: streamCount,
            video: videoIndex.map { videoInfo(at: $0) },
            audio: audioIndex.map { audioInfo(at: $0) }
        )
    }

    private func videoInfo(at index: Int) -> VideoStreamInfo {
        let st = stream(index)
        let par = st.pointee.codecpar.pointee
        let rate = av_guess_frame_rate(format, st, nil)
        let pixelFormat = AVPixelFormat(rawValue: par.format)
        let descriptor = av_pix_fmt_desc_get(pixelFormat)
        return VideoStreamInfo(
            codec: String(cString: avcodec_get_name(par.codec_id)),
            width: Int(par.width),
            height: Int(par.height),
            rotation: VideoStreamInfo.clockwiseRotation(fromDisplayMatrixDegrees: cff_stream_rotation(st)),
            frameRate: rate.den > 0 ? av_q2d(rate) : 0,
            pixelFormat: av_get_pix_fmt_name(pixelFormat).map { String(cString: $0) } ?? "unknown",
            bitDepth: descriptor.map { Int($0.pointee.comp.0.depth) } ?? 8,
            colorTransfer: String(cString: av_color_transfer_name(par.color_trc)),
            colorPrimaries: String(cString: av_color_primaries_name(par.color_primaries)),
            colorSpace: String(cString: av_color_space_name(par.color_space)),
            dolbyVision: cff_stream_has_dovi(st) != 0
        )
    }

    private func audioInfo(at index: Int) -> AudioStreamInfo {
        let par = stream(index).pointee.codecpar!
        return AudioStreamInfo(
            codec: String(cString: avcodec_get_name(par.pointee.codec_id)),
            sampleRate: Int(par.pointee.sample_rate),
            channels: Int(cff_codecpar_channels(par))
        )
    }
}

/// Reads a file's stream layout without decoding it.
public enum MediaProbe {
    public static func probe(path: String) throws -> SourceProbe {
        try InputContext(path: path).probe()
    }
}
