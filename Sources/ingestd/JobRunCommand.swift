import ArgumentParser
import Foundation
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

    func run() async throws {
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
            let preset = try PresetOption.load(request.preset)
            let (events, continuation) = AsyncStream.makeStream(of: TranscodeEvent.self, bufferingPolicy: .bufferingNewest(4))
            let job = TranscodeJob(input: request.input, destination: request.output, preset: preset, parent: parent,
                                   attempt: request.attempt)
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
            for await event in events {
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
