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

    /// Tags colour the stream leaves unspecified as BT.709 limited range (what untagged HD is
    /// taken to be), so the container says what every other rung says.
    func tagUnspecifiedColourAsBT709() {
        let p = pointer
        if p.pointee.color_primaries == AVCOL_PRI_UNSPECIFIED { p.pointee.color_primaries = AVCOL_PRI_BT709 }
        if p.pointee.color_trc == AVCOL_TRC_UNSPECIFIED { p.pointee.color_trc = AVCOL_TRC_BT709 }
        if p.pointee.color_space == AVCOL_SPC_UNSPECIFIED { p.pointee.color_space = AVCOL_SPC_BT709 }
        if p.pointee.color_range == AVCOL_RANGE_UNSPECIFIED { p.pointee.color_range = AVCOL_RANGE_MPEG }
    }

    deinit {
        var owned: UnsafeMutablePointer<AVCodecParameters>? = pointer
        avcodec_parameters_free(&owned)
    }

    /// The codec's global header (avcC for H.264 from MP4).
    var extradata: [UInt8] { extradataBytes(pointer.pointee.extradata, count: pointer.pointee.extradata_size) }
}
