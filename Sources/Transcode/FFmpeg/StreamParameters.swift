internal import CFFmpeg

/// A copy of an input stream's codec parameters and time base, for muxing its packets as they
/// are. Owns its `AVCodecParameters` and frees it exactly once.
final class StreamParameters: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<AVCodecParameters>
    let timeBase: AVRational

    init(input: borrowing InputContext, streamIndex: Int) throws {
        guard let copy = avcodec_parameters_alloc() else { throw TranscodeError.internalFailure("avcodec_parameters_alloc") }
        pointer = copy
        let stream = input.stream(streamIndex)
        timeBase = stream.pointee.time_base
        let copied = avcodec_parameters_copy(copy, stream.pointee.codecpar)
        guard copied >= 0 else { throw TranscodeError.internalFailure("codec parameters: \(AVResult.message(copied))") }
        copy.pointee.codec_tag = 0  // let each muxer pick its own tag
    }

    deinit {
        var owned: UnsafeMutablePointer<AVCodecParameters>? = pointer
        avcodec_parameters_free(&owned)
    }

    /// The codec's global header (avcC for H.264 from MP4).
    var extradata: [UInt8] {
        guard let data = pointer.pointee.extradata, pointer.pointee.extradata_size > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: Int(pointer.pointee.extradata_size)))
    }
}
