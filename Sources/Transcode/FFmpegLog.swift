internal import CFFmpeg

/// FFmpeg's own console logging. Quiet by default: errors reach callers as ``TranscodeError``.
public enum FFmpegLog {
    public enum Level: String, Sendable, CaseIterable {
        case quiet, panic, fatal, error, warning, info, verbose, debug
    }

    public static func setLevel(_ level: Level) {
        let value: Int32 = switch level {
        case .quiet: AV_LOG_QUIET
        case .panic: AV_LOG_PANIC
        case .fatal: AV_LOG_FATAL
        case .error: AV_LOG_ERROR
        case .warning: AV_LOG_WARNING
        case .info: AV_LOG_INFO
        case .verbose: AV_LOG_VERBOSE
        case .debug: AV_LOG_DEBUG
        }
        av_log_set_level(value)
    }
}
