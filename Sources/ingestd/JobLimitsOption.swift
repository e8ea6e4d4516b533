import ArgumentParser
import Ingest

/// The limits of one job process, for every command that runs job processes (`watch`, `worker`,
/// `reprocess`): declared and checked once.
struct JobLimitsOption: ParsableArguments {
    @Option(help: "Wall-clock limit of one job attempt, in seconds (in watch and worker, time it was stopped for a shown video's margin does not count).")
    var jobTimeout: Double = 600

    @Option(help: "Address-space limit of a job process, in MiB, 1024 to 1048576 (AV1 and HEVC encoders reserve much more than they touch).")
    var jobMemoryMb: Int = 8192

    func validate() throws {
        guard jobTimeout > 0, jobTimeout.isFinite else { throw ValidationError("--job-timeout must be a positive number of seconds") }
        guard (1024...1_048_576).contains(jobMemoryMb) else { throw ValidationError("--job-memory-mb must be 1024...1048576") }
    }

    /// A runner of job processes within these limits (CPU time: four cores' worth of the timeout).
    func runner(presetArgument: String) -> JobRunner {
        JobRunner(executable: Executable.path, presetArgument: presetArgument, timeoutSeconds: jobTimeout,
                  limits: ChildLimits(memoryMB: jobMemoryMb, cpuSeconds: Int(jobTimeout * 4)))
    }
}
