internal import CFFmpeg

/// Outcome of one receive call on a codec or filter sink: EAGAIN and EOF are states, not errors.
enum StepResult {
    case ready
    case needsInput
    case endOfStream
}

enum AVResult {
    static let again = cff_error_eagain()
    static let eof = cff_error_eof()

    /// FFmpeg's message for an error code.
    static func message(_ code: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        av_strerror(code, &buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Maps a receive-style return value to a step, throwing on real errors.
    static func step(_ code: Int32, _ error: (String) -> TranscodeError) throws -> StepResult {
        if code >= 0 { return .ready }
        if code == again { return .needsInput }
        if code == eof { return .endOfStream }
        throw error(message(code))
    }
}
