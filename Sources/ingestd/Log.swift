import Foundation
import Logging
import Transcode

enum Log {
    /// Logs go to stderr; `INGESTD_LOG_LEVEL` (trace…critical) sets the level, default `warning`.
    /// `INGESTD_FFMPEG_LOG` (quiet…debug) sets FFmpeg's own console level, default `fatal`.
    static func make(label: String, format: LogFormat = .text, defaultLevel: Logger.Level = .warning) -> Logger {
        var logger = Logger(label: label) { label in
            format == .json ? JSONLogHandler(label: label) as LogHandler : StreamLogHandler.standardError(label: label)
        }
        let level = ProcessInfo.processInfo.environment["INGESTD_LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:))
        logger.logLevel = level ?? defaultLevel
        let ffmpeg = ProcessInfo.processInfo.environment["INGESTD_FFMPEG_LOG"].flatMap(FFmpegLog.Level.init(rawValue:))
        FFmpegLog.setLevel(ffmpeg ?? .fatal)
        return logger
    }
}

/// One JSON object per line on stderr: time, level, label, message and metadata.
struct JSONLogHandler: LogHandler {
    let label: String
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .info

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var object: [String: String] = ["time": ISO8601DateFormatter().string(from: Date()), "level": event.level.rawValue,
                                        "label": label, "message": event.message.description]
        for (key, value) in metadata.merging(event.metadata ?? [:], uniquingKeysWith: { $1 }) { object[key] = value.description }
        if let error = event.error { object["error"] = "\(error)" }
        guard var data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else { return }
        data.append(0x0a)
        FileHandle.standardError.write(data)
    }
}
