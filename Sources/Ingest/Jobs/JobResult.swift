import Foundation
import Transcode

/// What a job child process reports in `work/<id>/result.json` before it exits.
public struct JobResult: Codable, Sendable, Equatable {
    public var ok: Bool
    /// Error code (`corrupt_input`, `too_long`, …) when not ok.
    public var code: String?
    public var message: String?
    public var durationSeconds: Double?
    public var speed: Double?
    /// For a job run with `--stage-only`: the staging directory left for the parent to publish.
    public var staging: String?

    public init(ok: Bool, code: String? = nil, message: String? = nil, durationSeconds: Double? = nil, speed: Double? = nil) {
        self.ok = ok
        self.code = code
        self.message = message
        self.durationSeconds = durationSeconds
        self.speed = speed
    }

    public init(manifest: ReadyManifest, staging: String? = nil) {
        ok = true
        self.staging = staging
        durationSeconds = manifest.durationSeconds
        speed = manifest.timings.speed
    }

    public init(error: Error) {
        ok = false
        code = IngestError.code(of: error)
        message = "\(error)"
    }
}
