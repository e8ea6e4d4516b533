import ArgumentParser
import Foundation
import ObjectStorage
import Storage
import Ingest
import Transcode
import Webhooks

/// Error and result reporting shared by the commands.
enum Report {
    /// Prints `error` (to stderr, or as JSON on stdout) and returns the exit code it maps to.
    static func fail(_ error: Error, json: Bool) -> ExitCode {
        var status = ExitStatus(for: error)
        let message = "\(error)"
        var code = IngestError.code(of: error)
        if let refused = error as? SubmitRefusal {
            code = refused.refusal.code
            status = ["missing", "input_missing"].contains(code) ? .inputMissing : .badInput
        }
        if let refused = error as? SecretFileError {
            code = switch refused.purpose {
            case "webhook secret": "bad_webhook_secret"
            case "console tokens file": "bad_console_tokens"
            default: "bad_upload_secret"
            }
            status = .badPreset
        }
        if error is MissingRoot {
            code = "missing_root"
            status = .badPreset
        }
        if error is S3Configuration.Invalid || error is S3Location.Invalid {
            code = "bad_storage"
            status = .badPreset
        }
        if let error = error as? S3Error {
            code = error.isOutOfSpace ? "no_space" : error.isTransient ? "storage_unavailable" : "storage_refused"
            status = error.isOutOfSpace ? .noSpace : error.isTransient ? .unavailable
                : ["GET", "HEAD"].contains(error.method) ? .inputMissing : .cannotWrite
        }
        if error is NoPointers {
            code = "no_pointers"
            status = .usage
        }
        if error is QueueUnavailable {
            code = "queue_unavailable"
            status = .unavailable
        }
        if json {
            var detail: [String: Any] = ["code": code, "message": message, "exitStatus": Int(status.rawValue)]
            switch error as? IngestError {
            case .badUpload(_, let field, _)?, .badCaptions(_, let field, _)?: detail["field"] = field
            default: break
            }
            if case .badPreset(_, let field, _) = error as? TranscodeError { detail["field"] = field }
            let body: [String: Any] = ["error": detail]
            if let data = try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys, .withoutEscapingSlashes]) {
                FileHandle.standardOutput.write(data + Data("\n".utf8))
            }
        }
        FileHandle.standardError.write(Data("ingestd: error: \(message)\n".utf8))
        return ExitCode(status.rawValue)
    }

    /// `body`'s value, or its error reported (to stderr) as the exit code it maps to.
    static func catching<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch {
            throw fail(error, json: false)
        }
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
