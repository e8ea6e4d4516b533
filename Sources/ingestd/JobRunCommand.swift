import ArgumentParser
import Foundation
import Synchronization
import Ingest
import Logging
import Transcode

/// The daemon's job process: one transcode with resource limits, dying with its parent.
struct JobRunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "job-run",
        abstract: "Run one daemon job (started by `ingestd watch`; not for direct use).",
        shouldDisplay: false
    )

    /// The ``JobRequest`` as JSON (see `JobProcessContract.swift`).
    @Argument var request: String

    /// How ``confineFirst(_:)`` went: nil when confined, or why not; an error when Landlock
    /// refused the rules (the job then fails rather than run unconfined).
    static let confinement = Mutex<Result<String?, JobSandbox.Refused>>(.success("not confined yet"))

    /// Before the first byte of the upload is read, and before any other thread exists: the
    /// job process may read its input, write its directories, and reach no network.
    static func confineFirst(_ arguments: [String]) {
        guard arguments.count == 3, arguments[1] == "job-run", let request = try? JobRequest(argument: arguments[2]) else { return }
        let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? 1
        let result: Result<String?, JobSandbox.Refused>
        do {
            result = .success(try JobSandbox.confine(request).map { $0 } ?? (threads > 1 ? "\(threads) threads ran before confinement" : nil))
        } catch let error as JobSandbox.Refused {
            result = .failure(error)
        } catch {
            result = .failure(JobSandbox.Refused(step: "\(error)"))
        }
        confinement.withLock { $0 = result }
    }

    func run() async throws {
        let started = Date()
        // Own process group: a Ctrl-C aimed at the daemon's terminal must not cut the job short;
        // the daemon decides when its jobs stop.
        setpgid(0, 0)
        let request = try JobRequest(argument: request)
        request.limits.apply()
        let parent = getppid()
        ChildLimits.dieWithParent()
        let logger = Log.make(label: "ingestd.job", format: .text, defaultLevel: .warning)
        let outcome: JobResult
        var status = ExitStatus.success
        do {
            switch Self.confinement.withLock({ $0 }) {
            case .success(let unconfined?): logger.warning("job process not confined", metadata: ["why": "\(unconfined)"])
            case .success(nil): break
            case .failure(let error): throw error
            }
            let preset = try PresetOption.load(request.preset)
            let (events, continuation) = AsyncStream.makeStream(of: TranscodeEvent.self, bufferingPolicy: .unbounded)
            var job = TranscodeJob(input: request.input, destination: request.output, preset: preset, parent: parent,
                                   attempt: request.attempt)
            job.publishedVersion = request.publishedVersion
            job.captionsFrom = request.captionsFrom
            job.playback = request.playback
            job.growing = request.mode != .whole
            let stageOnly = request.stageOnly
            let work = Task { () -> (ReadyManifest, String?) in
                if stageOnly {
                    let (manifest, staged) = try await job.stage(logger: logger, events: continuation)
                    // Flushed here, so the parent's publish (a rename inside a database
                    // transaction) holds the job's row lock only for the rename.
                    try Durability.syncTree(staged.staging)
                    return (manifest, staged.staging)
                }
                return (try await job.run(logger: logger, events: continuation), nil)
            }
            let signals = SignalTrap(cancelling: work)
            let progressPath = request.progressPath
            var last = ContinuousClock.now - .seconds(10)
            var plannedAt: Date?
            var totalSeconds: Double?
            var shown: JobPlayable?
            for await event in events {
                if case .planned(let plan) = event {
                    plannedAt = Date()
                    totalSeconds = plan.estimatedSeconds
                }
                if case .playable(let seconds) = event, let path = request.mode.reports {
                    shown = JobPlayable(seconds: seconds, at: Date(), startedAt: started, plannedAt: plannedAt, totalSeconds: totalSeconds)
                    try? JSONFile.write(shown!, to: path)
                }
                if case .listed(let seconds, let ended) = event, let path = request.mode.reports, var report = shown {
                    report.seconds = seconds
                    report.ended = ended
                    try? JSONFile.write(report, to: path)  // the running report the worker keeps the margin from
                }
                guard case .progress(let p) = event, ContinuousClock.now - last >= .seconds(1) else { continue }
                last = ContinuousClock.now
                try? JSONFile.write(JobProgress(fraction: p.fraction, outputSeconds: p.outputSeconds, speed: p.speed,
                                                etaSeconds: p.etaSeconds, updatedAt: Date()), to: progressPath)
            }
            let (manifest, staging) = try await work.value
            signals.disarm()
            outcome = JobResult(manifest: manifest, staging: staging)
        } catch {
            outcome = JobResult(error: error)
            status = ExitStatus(for: error)
        }
        try? JSONFile.write(outcome, to: request.resultPath)
        if status != .success { throw ExitCode(status.rawValue) }
    }
}
