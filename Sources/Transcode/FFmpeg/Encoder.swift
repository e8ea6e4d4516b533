internal import CFFmpeg

/// An opened encoder. Owns its `AVCodecContext`; options it did not recognise are an error.
final class Encoder {
    private(set) var context: UnsafeMutablePointer<AVCodecContext>?
    let name: String

    /// Allocates the encoder, lets `configure` set fields, then opens it with `options`.
    init(codecName: String, options: [String: String],
         configure: (UnsafeMutablePointer<AVCodecContext>) -> Void) throws {
        name = codecName
        guard let codec = avcodec_find_encoder_by_name(codecName) else {
            throw TranscodeError.internalFailure("encoder \(codecName) is not available in this FFmpeg build")
        }
        guard let ctx = avcodec_alloc_context3(codec) else { throw TranscodeError.internalFailure("avcodec_alloc_context3") }
        context = ctx
        configure(ctx)
        let dictionary = OptionDictionary(options)
        let opened = avcodec_open2(ctx, codec, &dictionary.pointer)
        guard opened >= 0 else {
            throw TranscodeError.internalFailure("cannot open encoder \(codecName): \(AVResult.message(opened))")
        }
        guard dictionary.leftover.isEmpty else {
            throw TranscodeError.internalFailure("encoder \(codecName) ignored options: \(dictionary.leftover.joined(separator: ", "))")
        }
    }

    deinit { avcodec_free_context(&context) }

    var ctx: UnsafeMutablePointer<AVCodecContext> { context! }
    var timeBase: AVRational { ctx.pointee.time_base }
    var frameSize: Int { Int(ctx.pointee.frame_size) }

    /// Sends a frame, or nil to drain.
    func send(_ frame: Frame?) throws {
        let result = avcodec_send_frame(ctx, frame?.pointer)
        guard result >= 0 || result == AVResult.eof else {
            throw TranscodeError.internalFailure("\(name): encode failed: \(AVResult.message(result))")
        }
    }

    func receive(into packet: Packet) throws -> StepResult {
        packet.unref()
        return try AVResult.step(avcodec_receive_packet(ctx, packet.pointer)) {
            .internalFailure("\(name): encode failed: \($0)")
        }
    }

    /// The codec's extradata (libx264's: Annex B SPS/PPS; a copied MP4 stream's: avcC), read for the RFC 6381 codec string.
    var extradata: [UInt8] { extradataBytes(ctx.pointee.extradata, count: ctx.pointee.extradata_size) }
}

/// A copy of `count` bytes at `data` (a codec's extradata); empty when there are none.
func extradataBytes(_ data: UnsafeMutablePointer<UInt8>?, count: Int32) -> [UInt8] {
    guard let data, count > 0 else { return [] }
    return Array(UnsafeBufferPointer(start: data, count: Int(count)))
}
