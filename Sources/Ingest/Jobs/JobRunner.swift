import Foundation
import Logging
import Transcode

/// How one attempt ended, as the daemon classifies it.
public enum JobOutcome: Sendable {
    case published(JobResult)
    /// The upload itself is bad: never retried.
    case rejected(code: String, message: String)
    /// Worth another attempt (crash, timeout, full disk, internal error).
    case retryable(code: String, message: String)
    /// Stopped because the daemon is shutting down: back to the queue, not counted.
    case interrupted
}

/// Runs one job attempt in a child process of the same binary (`ingestd job-run`), with a
/// wall-clock timeout and resource limits, so a crash or hang in FFmpeg only kills that job.
public struct JobRunner: Sendable {
    public var executable: String
    public var presetArgument: String
    public var timeoutSeconds: Double
    public var limits: ChildLimits
    /// How long a job process asked to stop (SIGTERM) may take before it is killed (SIGKILL).
    public var killAfterSeconds: Double

    public init(executable: String, presetArgument: String, timeoutSeconds: Double, limits: ChildLimits,
                killAfterSeconds: Double = 5) {
        self.executable = executable
        self.presetArgument = presetArgument
        self.timeoutSeconds = timeoutSeconds
        self.limits = limits
        self.killAfterSeconds = killAfterSeconds
    }

    /// What a job process inherits of `environment`: an allow-list (paths, locale, time zone,
    /// where presets are, how to log and report a crash). Nothing else reaches a process that
    /// decodes strangers' bytes: no database URL, no cloud credentials, no secret of any kind.
    static func environment(_ environment: [String: String]) -> [String: String] {
        let allowed: Set<String> = ["PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "LD_LIBRARY_PATH",
                                    "INGESTD_PRESETS", "INGESTD_LOG_LEVEL", "SWIFT_BACKTRACE", "ASAN_OPTIONS"]
        return environment.filter { allowed.contains($0.key) }
    }

    /// Runs the attempt; `stop` is checked while waiting and, when it turns true, the child is
    /// asked to stop (SIGTERM), killed if it is still there `killAfterSeconds` later, and the
    /// attempt ends as `.interrupted`. `jobDirectory` holds the job's own files (result, progress),
    /// never the upload.
    /// `attempt` (a queue attempt's fencing token) names the staging, see ``StagedDirectory``.
    /// `publishedVersion`: see ``TranscodeJob/publishedVersion``.
    public func run(input: TranscodeJob.Input, output: String, jobDirectory: String, stageOnly: Bool = false,
                    attempt: Int64? = nil, publishedVersion: String? = nil,
                    stop: @escaping @Sendable () -> Bool) async -> JobOutcome {
        let resultPath = "\(jobDirectory)/result.json"
        try? FileManager.default.removeItem(atPath: resultPath)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        let request = JobRequest(input: input, output: output, preset: presetArgument, resultPath: resultPath,
                                 progressPath: "\(jobDirectory)/progress.json", limits: limits, stageOnly: stageOnly, attempt: attempt,
                                 publishedVersion: publishedVersion)
        do {
            process.arguments = ["job-run", try request.argument()]
        } catch {
            return .retryable(code: "internal", message: "cannot encode the job request: \(error)")
        }
        process.environment = Self.environment(ProcessInfo.processInfo.environment)
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            return .retryable(code: "internal", message: "cannot start job process: \(error)")
        }
        let started = ContinuousClock.now
        var timedOut = false, interrupted = false, killed = false
        var stopAsked = ContinuousClock.now
        while process.isRunning {
            // Not cut short by cancellation (that would spin): a cancelled wait asks the child
            // to stop like `stop` does, and still waits for it.
            await SteadyTimer.pause(for: .milliseconds(100))
            if !interrupted, stop() || Task.isCancelled {
                interrupted = true
                stopAsked = .now
                kill(process.processIdentifier, SIGTERM)
            }
            if interrupted, !killed, ContinuousClock.now - stopAsked > .seconds(killAfterSeconds) {
                killed = true
                kill(process.processIdentifier, SIGKILL)
            }
            if !timedOut, ContinuousClock.now - started > .seconds(timeoutSeconds) {
                timedOut = true
                kill(process.processIdentifier, SIGKILL)
            }
        }
        process.waitUntilExit()
        let result = JSONFile.read(JobResult.self, from: resultPath)
        if timedOut {
            return .retryable(code: "timeout", message: "\(input.description): no result within the \(Int(timeoutSeconds)) s job timeout")
        }
        if process.terminationReason == .uncaughtSignal {
            if interrupted { return .interrupted }
            return .retryable(code: "crashed", message: "\(input.description): job process killed by signal \(process.terminationStatus)")
        }
        let status = ExitStatus(rawValue: process.terminationStatus)
        switch status {
        case .success?:
            return result.map(JobOutcome.published) ?? .retryable(code: "internal", message: "job process left no result")
        case .badInput?:
            return .rejected(code: result?.code ?? "corrupt_input", message: result?.message ?? "\(input.description): rejected")
        case .interrupted?:
            return .interrupted
        case .noSpace?:
            // Said by the exit status too: a full disk may have kept the result from being written.
            return .retryable(code: "no_space", message: result?.message ?? "\(input.description): the job process found a file system full")
        default:
            return .retryable(code: result?.code ?? "crashed",
                              message: result?.message ?? "\(input.description): job process exited with status \(process.terminationStatus)")
        }
    }
}
