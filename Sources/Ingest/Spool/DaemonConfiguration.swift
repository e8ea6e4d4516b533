import Foundation
import Transcode

/// How the daemon runs.
public struct DaemonConfiguration: Sendable {
    public var spool: SpoolLayout
    public var cdn: String
    public var preset: Preset
    public var runner: JobRunner
    /// Jobs transcoded at once.
    public var jobs: Int
    /// Attempts (crashes, timeouts, retryable errors) before an upload goes to `failed/`.
    public var maxAttempts: Int
    /// First retry delay; doubles with each failed attempt (capped at 5 minutes).
    public var backoffSeconds: Double
    /// A file copied into `incoming/` in place must keep its size and mtime this long to count as complete.
    public var settleSeconds: Double
    /// Interval of the full rescan of `incoming/`, which runs whether or not events flow: the
    /// safety net under inotify (which only wakes the daemon sooner) and all there is without it.
    public var pollSeconds: Double
    /// On SIGTERM, how long jobs in flight may run on before they are stopped and left queued.
    public var graceSeconds: Double
    /// When set, uploads are checked, moved to `queued/` and handed to this queue instead of
    /// being transcoded here (the fleet's workers run them); `jobs` then bounds hand-offs in flight.
    public var handOff: (any JobHandOff)?
    /// When set, every final outcome is recorded here as a webhook event before the upload is filed.
    public var outbox: Outbox?

    public init(spool: SpoolLayout, cdn: String, preset: Preset, runner: JobRunner, jobs: Int, maxAttempts: Int = 3,
                backoffSeconds: Double = 5, settleSeconds: Double = 2, pollSeconds: Double = 1, graceSeconds: Double = 30) {
        self.spool = spool
        self.cdn = cdn
        self.preset = preset
        self.runner = runner
        self.jobs = jobs
        self.maxAttempts = maxAttempts
        self.backoffSeconds = backoffSeconds
        self.settleSeconds = settleSeconds
        self.pollSeconds = pollSeconds
        self.graceSeconds = graceSeconds
    }
}
