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
    /// The attempt's playback policy, for the video's manifest (set per attempt).
    public var playback: PlaybackPolicy?

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
    /// `publishedVersion`, `captionsFrom`: see ``TranscodeJob/publishedVersion``, ``TranscodeJob/captionsFrom``.
    /// `growing`: the job grows its output in place (`output` is its version directory, see
    /// ``TranscodeJob/growing``) and reports what its ladder lists to `watcher`, which hears
    /// of the process in any case (``JobWatcher``).
    public func run(input: TranscodeJob.Input, output: String, jobDirectory: String, stageOnly: Bool = false,
                    attempt: Int64? = nil, publishedVersion: String? = nil, captionsFrom: String? = nil, growing: Bool = false,
                    watcher: (any JobWatcher)? = nil, logTail: JobLogTail? = nil,
                    stop: @escaping @Sendable () -> Bool) async -> JobOutcome {
        let resultPath = "\(jobDirectory)/result.json"
        let playablePath = "\(jobDirectory)/playable.json"
        for stale in [resultPath, playablePath] { try? FileManager.default.removeItem(atPath: stale) }
        var request = JobRequest(input: input, output: output, preset: presetArgument, resultPath: resultPath,
                                 progressPath: "\(jobDirectory)/progress.json", limits: limits, stageOnly: stageOnly, attempt: attempt,
                                 publishedVersion: publishedVersion)
        if growing { request.mode = .growing(reports: playablePath) }
        request.captionsFrom = captionsFrom
        request.playback = playback
        let process: Process
        do {
            process = try start(request, logTail: logTail)
        } catch {
            return .retryable(code: "internal", message: "\(error)")
        }
        watcher?.started(pid: process.processIdentifier, at: Date())
        let reports = growing ? watcher : nil
        let ending = await wait(for: process, stop: stop, watcher: watcher, shown: reports == nil) { shown in
            guard let reports, let report = JSONFile.read(JobPlayable.self, from: playablePath) else { return shown }
            return await reports.reported(report) || shown
        }
        return outcome(of: process, ending, result: JSONFile.read(JobResult.self, from: resultPath), input: input)
    }

    /// Starts `ingestd job-run` with the request as its argument and the allow-listed environment.
    private func start(_ request: JobRequest, logTail: JobLogTail?) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        do {
            process.arguments = ["job-run", try request.argument()]
        } catch {
            throw CannotStart(description: "cannot encode the job request: \(error)")
        }
        process.environment = Self.environment(ProcessInfo.processInfo.environment)
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        if let logTail { process.standardError = logTail.pipe }
        do {
            try process.run()
        } catch {
            throw CannotStart(description: "cannot start job process: \(error)")
        }
        logTail?.start()
        return process
    }

    private struct CannotStart: Error, CustomStringConvertible {
        var description: String
    }

    /// How a job process's wait ended: on its own, past the timeout, or asked to stop.
    private struct Ending {
        var timedOut = false
        var interrupted = false
    }

    /// Waits for the job process, asking it to stop (SIGTERM, then SIGKILL `killAfterSeconds`
    /// later) once `stop` says so or the task is cancelled, and killing it past the timeout.
    /// `look` is asked at each look, with whether its video is shown, and says whether it is
    /// (a growing job's report, read more often until it shows). Time the `watcher` held the
    /// process back is not charged to the timeout.
    private func wait(for process: Process, stop: @Sendable () -> Bool, watcher: (any JobWatcher)?, shown: Bool,
                      look: (Bool) async -> Bool) async -> Ending {
        let started = ContinuousClock.now
        var ending = Ending(), killed = false, shown = shown
        var stopAsked = ContinuousClock.now
        while process.isRunning {
            // Not cut short by cancellation (that would spin): a cancelled wait asks the child
            // to stop like `stop` does, and still waits for it.
            await SteadyTimer.pause(for: .milliseconds(shown ? 100 : 20))
            if !ending.interrupted { shown = await look(shown) }
            if !ending.interrupted, stop() || Task.isCancelled {
                ending.interrupted = true
                stopAsked = .now
                watcher?.ending()
                kill(process.processIdentifier, SIGTERM)
                kill(process.processIdentifier, SIGCONT)  // nor one stopped by anyone else (a debugger, an operator)
            }
            if ending.interrupted, !killed, ContinuousClock.now - stopAsked > .seconds(killAfterSeconds) {
                killed = true
                kill(process.processIdentifier, SIGKILL)
            }
            if !ending.timedOut, ContinuousClock.now - started - (watcher?.waited ?? .zero) > .seconds(timeoutSeconds) {
                ending.timedOut = true
                kill(process.processIdentifier, SIGKILL)
            }
        }
        watcher?.ending()
        process.waitUntilExit()
        return ending
    }

    /// The attempt's outcome from how the job process ended, its exit status and its result.
    private func outcome(of process: Process, _ ending: Ending, result: JobResult?, input: TranscodeJob.Input) -> JobOutcome {
        if ending.timedOut {
            return .retryable(code: "timeout", message: "\(input.description): no result within the \(Int(timeoutSeconds)) s job timeout")
        }
        if process.terminationReason == .uncaughtSignal {
            if ending.interrupted { return .interrupted }
            return .retryable(code: "crashed", message: "\(input.description): job process killed by signal \(process.terminationStatus)")
        }
        switch ExitStatus(rawValue: process.terminationStatus) {
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
