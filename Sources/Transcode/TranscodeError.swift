import Foundation

/// Everything that can stop a transcode, with enough context for an operator to act on it.
///
/// Each case names the file it concerns. ``category`` groups cases by who has to act:
/// the uploader (bad input), the operator (bad preset, unwritable output) or the developers.
public enum TranscodeError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file could not be opened or parsed as media at all.
    case cannotOpen(path: String, reason: String)
    /// The container is not one an upload may be (a playlist, a concat list, anything that could
    /// make the demuxer open another input); `container` is what libavformat detected.
    case unsupportedContainer(path: String, container: String)
    /// The file has no decodable video stream.
    case noVideoStream(path: String)
    /// The file is a still image, not a video.
    case stillImage(path: String)
    /// The sound track has no audio stream.
    case noAudioStream(path: String)
    /// A clip's trim window does not fit the clip.
    case badTrim(path: String, detail: String)
    /// The file's codec is not supported by this build.
    case unsupportedCodec(path: String, codec: String)
    /// The media is damaged: decoding produced no usable pictures, or a stream broke mid-way.
    case corruptInput(path: String, detail: String)
    /// The media is readable but outside what the preset allows (size, frame rate, channels...).
    case limitExceeded(path: String, limit: String, measured: String, allowed: String)
    /// The preset is invalid; `field` is the JSON path of the offending value.
    case badPreset(source: String, field: String, reason: String)
    /// The published version a hot transcode builds on does not match the plan (another ladder or
    /// keyframe layout), or cannot be read.
    case publishedMismatch(path: String, detail: String)
    /// Output could not be written (permissions, full disk, existing directory...).
    case outputFailed(path: String, reason: String)
    /// The job was cancelled (shutdown or Ctrl-C) before it finished.
    case cancelled
    /// A failure inside the engine that is not explained by the input.
    case internalFailure(String)

    /// Who has to act on an error.
    public enum Category: String, Sendable {
        case badInput, badPreset, output, cancelled, `internal`
    }

    public var category: Category {
        switch self {
        case .cannotOpen, .unsupportedContainer, .noVideoStream, .noAudioStream, .badTrim, .stillImage, .unsupportedCodec, .corruptInput, .limitExceeded: .badInput
        case .badPreset, .publishedMismatch: .badPreset
        case .outputFailed: .output
        case .cancelled: .cancelled
        case .internalFailure: .internal
        }
    }

    /// A stable machine code, used in JSON output and rejection records.
    public var code: String {
        switch self {
        case .cannotOpen: "corrupt_input"
        case .unsupportedContainer: "unsupported_container"
        case .noVideoStream: "no_video_stream"
        case .noAudioStream: "no_audio_stream"
        case .badTrim: "bad_trim"
        case .stillImage: "still_image"
        case .unsupportedCodec: "unsupported_codec"
        case .corruptInput: "corrupt_input"
        case .limitExceeded(_, "size", _, _): "too_large"
        case .limitExceeded(_, "duration", _, _): "too_long"
        case .limitExceeded(_, let limit, _, _): "limit_\(limit)"
        case .badPreset: "bad_preset"
        case .publishedMismatch: "published_mismatch"
        case .outputFailed(_, let reason) where Self.isOutOfSpace(reason): "no_space"
        case .outputFailed: "output_failed"
        case .cancelled: "cancelled"
        case .internalFailure: "internal"
        }
    }

    public var description: String {
        switch self {
        case .cannotOpen(let path, let reason): "\(path): cannot open as media: \(reason)"
        case .unsupportedContainer(let path, let container):
            "\(path): unsupported container '\(container)' (accepted: a single recording such as MP4/MOV, "
                + "WebM/MKV, AVI, MPEG-TS or an audio file; playlists and lists of other files are refused)"
        case .noVideoStream(let path): "\(path): no video stream"
        case .noAudioStream(let path): "\(path): no audio stream (a sound track must contain audio)"
        case .badTrim(let path, let detail): "\(path): bad trim: \(detail)"
        case .stillImage(let path): "\(path): a still image, not a video"
        case .unsupportedCodec(let path, let codec): "\(path): unsupported codec '\(codec)'"
        case .corruptInput(let path, let detail): "\(path): corrupt input: \(detail)"
        case .limitExceeded(let path, let limit, let measured, let allowed):
            "\(path): \(limit) \(measured) exceeds the limit of \(allowed)"
        case .badPreset(let source, let field, let reason): "preset \(source): field '\(field)': \(reason)"
        case .publishedMismatch(let path, let detail): "\(path): the published version cannot be kept: \(detail)"
        case .outputFailed(let path, let reason): "\(path): cannot write output: \(reason)"
        case .cancelled: "cancelled"
        case .internalFailure(let detail): "internal error: \(detail)"
        }
    }
}

extension TranscodeError {
    /// Whether a write failed because the file system is full or over quota (ENOSPC, EDQUOT): a
    /// fault of the host (code `no_space`), never of the upload.
    public static func isOutOfSpace(_ reason: String) -> Bool {
        reason.contains(String(cString: strerror(ENOSPC))) || reason.contains(String(cString: strerror(EDQUOT)))
    }
}

extension TranscodeError {
    /// A failed write of `path`, with the file system's own words: a full disk or quota stays
    /// recognisable (``isOutOfSpace(_:)``, code `no_space`) whichever API failed.
    public static func writeFailed(_ path: String, _ error: any Error) -> TranscodeError {
        .outputFailed(path: path, reason: writeFailure(error))
    }

    /// A failed write of `path` from a C call that set `errno` (`code`).
    public static func writeFailed(_ path: String, errno code: Int32) -> TranscodeError {
        .outputFailed(path: path, reason: String(cString: strerror(code)))
    }

    /// What a write error says, with `strerror` of its POSIX cause where one is known:
    /// Foundation reports ENOSPC as "There isn't enough space" (CocoaError 640), which the
    /// `no_space` rule would not see.
    public static func writeFailure(_ error: any Error) -> String {
        guard let code = posixCode(error) else { return "\(error.localizedDescription)" }
        return String(cString: strerror(code))
    }

    private static func posixCode(_ error: any Error) -> Int32? {
        if let error = error as? POSIXError { return error.code.rawValue }
        let error = error as NSError
        if error.domain == NSPOSIXErrorDomain { return Int32(error.code) }
        if let underlying = error.userInfo[NSUnderlyingErrorKey] as? NSError, let code = posixCode(underlying) { return code }
        if error.domain == NSCocoaErrorDomain, error.code == CocoaError.fileWriteOutOfSpace.rawValue { return ENOSPC }
        return nil
    }
}
