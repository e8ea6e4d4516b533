import ArgumentParser
import Dispatch
import Foundation
import Ingest
import Logging
import Transcode
import Webhooks

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

/// Error and result reporting shared by the commands.
enum Report {
    /// Prints `error` (to stderr, or as JSON on stdout) and returns the exit code it maps to.
    static func fail(_ error: Error, json: Bool) -> ExitCode {
        var status = ExitStatus(for: error)
        let message = "\(error)"
        var code = (error as? TranscodeError)?.code ?? (error as? IngestError)?.code ?? "internal"
        if let refused = error as? SubmitRefusal {
            code = refused.refusal.code
            status = code == "missing" ? .inputMissing : .badInput
        }
        if error is WebhookSecretError {
            code = "bad_webhook_secret"
            status = .badPreset
        }
        if error is QueueUnavailable {
            code = "queue_unavailable"
            status = .unavailable
        }
        if json {
            var detail: [String: Any] = ["code": code, "message": message, "exitStatus": Int(status.rawValue)]
            if case .badUpload(_, let field, _) = error as? IngestError { detail["field"] = field }
            if case .badPreset(_, let field, _) = error as? TranscodeError { detail["field"] = field }
            let body: [String: Any] = ["error": detail]
            if let data = try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys]) {
                FileHandle.standardOutput.write(data + Data("\n".utf8))
            }
        }
        FileHandle.standardError.write(Data("ingestd: error: \(message)\n".utf8))
        return ExitCode(status.rawValue)
    }

    static func summary(_ manifest: ReadyManifest, out: String) {
        var lines = ["published \(out)  (\(String(format: "%.2f", manifest.durationSeconds)) s, \(manifest.width)x\(manifest.height), "
            + "\(String(format: "%.1f", manifest.timings.wallSeconds)) s wall, \(String(format: "%.2f", manifest.timings.speed))x realtime)"]
        for rendition in manifest.renditions {
            lines.append(String(format: "  %-6@ %5dx%-5d avg %6.0f kb/s  peak %6.0f kb/s  %@", rendition.name as NSString,
                                rendition.width, rendition.height, Double(rendition.averageBandwidth) / 1000,
                                Double(rendition.bandwidth) / 1000, rendition.playlist as NSString))
        }
        lines.append("  master  \(out)/\(manifest.master)")
        lines.append("  mp4     \(out)/\(manifest.mp4)")
        lines.append("  posters \(manifest.posters.map(\.path).joined(separator: " "))")
        if let preview = manifest.preview {
            lines.append("  preview \(preview.path)  \(preview.width)x\(preview.height)  \(String(format: "%.1f", preview.durationSeconds)) s from \(String(format: "%.1f", preview.startSeconds)) s  \(preview.bytes / 1000) KB")
        }
        print(lines.joined(separator: "\n"))
    }
}

/// Turns SIGINT/SIGTERM into task cancellation, so the job cleans up its staging directory.
final class SignalTrap: @unchecked Sendable {
    private var sources: [DispatchSourceSignal] = []

    convenience init(cancelling task: Task<some Sendable, some Error>) {
        self.init { task.cancel() }
    }

    init(_ handler: @escaping @Sendable () -> Void) {
        for sig in [SIGINT, SIGTERM] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler(handler: handler)
            source.resume()
            sources.append(source)
        }
    }

    func disarm() {
        sources.forEach { $0.cancel() }
        sources.removeAll()
    }
}

/// A one-line progress display on stderr: percent, bar, fps, speed, ETA.
final class ProgressDisplay {
    private let enabled: Bool
    private var drawn = false

    init(enabled: Bool) { self.enabled = enabled }

    func show(_ event: TranscodeEvent) {
        guard enabled, case .progress(let progress) = event else { return }
        let width = 24
        let filled = Int(progress.fraction * Double(width))
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        let eta = progress.etaSeconds.map { String(format: "%d:%02d", Int($0) / 60, Int($0) % 60) } ?? "--:--"
        let line = String(format: "\r\u{1B}[2K%3.0f%% [%@] %6.1f fps %5.2fx ETA %@  %.1f/%.1f s",
                          progress.fraction * 100, bar as NSString, progress.framesPerSecond, progress.speed,
                          eta as NSString, progress.outputSeconds, progress.totalSeconds)
        FileHandle.standardError.write(Data(line.utf8))
        drawn = true
    }

    func clear() {
        if drawn { FileHandle.standardError.write(Data("\r\u{1B}[2K".utf8)) }
    }
}
