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

    @Argument var input: String?
    /// The directory holding the one upload, opened by its raw name (the spool's `work/<id>/upload`).
    @Option var soleEntryOf: String?
    @Option var out: String
    @OptionGroup var presetOption: PresetOption
    @Option var result: String
    @Option var progress: String
    @Option var memoryMb: Int
    @Option var cpuSeconds: Int
    /// Transcode into staging and leave it there (named in the result) for the parent to publish.
    @Flag var stageOnly = false
    /// The queue attempt (fencing token) this job runs for: names the staging `.<id>.staging-t<attempt>`.
    @Option var attempt: Int64?

    func run() async throws {
        // Own process group: a Ctrl-C aimed at the daemon's terminal must not cut the job short;
        // the daemon decides when its jobs stop.
        setpgid(0, 0)
        ChildLimits(memoryMB: memoryMb, cpuSeconds: cpuSeconds).apply()
        let parent = getppid()
        ChildLimits.dieWithParent()
        let logger = Log.make(label: "ingestd.job", format: .text, defaultLevel: .warning)
        let outcome: JobResult
        var status = ExitStatus.success
        do {
            let preset = try presetOption.load()
            let (events, continuation) = AsyncStream.makeStream(of: TranscodeEvent.self, bufferingPolicy: .bufferingNewest(4))
            guard let source: TranscodeJob.Input = input.map({ .path($0) }) ?? soleEntryOf.map({ .soleEntry(of: $0) }) else {
                throw ValidationError("an input or --sole-entry-of is required")
            }
            let job = TranscodeJob(input: source, destination: out, preset: preset, parent: parent, attempt: attempt)
            let stageOnly = stageOnly
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
            let progressPath = progress
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
        try? JSONFile.write(outcome, to: result)
        if status != .success { throw ExitCode(status.rawValue) }
    }
}
