import ArgumentParser
import Foundation
import Ingest
import Logging
import ServiceLifecycle
import Transcode

struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Run the spool daemon: transcode every upload dropped into SPOOL/incoming/ and publish it to CDN/<id>/.",
        discussion: """
        Drop a video file, or an upload directory (clips + sound track + upload.json), into \
        SPOOL/incoming/, preferably by writing it elsewhere (or under a hidden name such as \
        .clip.mp4.part) and renaming it in: a rename is picked up at once. A file copied in place \
        is picked up once it is closed, or its size and mtime have been stable for --settle \
        seconds; an upload that grows past the size limit is refused at once.

        Each upload is claimed (moved to SPOOL/work/<id>/), transcoded in a child process with a \
        timeout and resource limits, published to CDN/<id>/ with one rename, and its original \
        filed under SPOOL/archive/<id>/. Bad uploads go to SPOOL/rejected/<id>/ and uploads whose \
        retries ran out to SPOOL/failed/<id>/, each with reason.json (code, message, attempts).

        SIGTERM or SIGINT: stop claiming, let jobs in flight finish for --grace seconds, then stop \
        them; they stay queued for the next start. kill -9 at any moment loses nothing: the next \
        start resumes what was in flight.

        Example:
          ingestd watch --spool /var/spool/ingestd --cdn /srv/cdn --jobs 2
        """
    )

    @Option(help: ArgumentHelp("Spool directory (created if missing).", valueName: "dir"))
    var spool: String

    @Option(help: ArgumentHelp("CDN root; each upload is published as CDN/<id>/.", valueName: "dir"))
    var cdn: String

    @OptionGroup var presetOption: PresetOption

    @Option(help: "Jobs transcoded at once (default: half the cores, at least 1).")
    var jobs: Int = max(1, ProcessInfo.processInfo.activeProcessorCount / 2)

    @Option(help: "Attempts before an upload whose job crashes or times out goes to failed/.")
    var maxAttempts: Int = 3

    @Option(help: "Wall-clock limit of one job attempt, in seconds.")
    var jobTimeout: Double = 600

    @Option(help: "Address-space limit of a job process, in MiB.")
    var jobMemoryMb: Int = 8192

    @Option(help: "Seconds a copied-in file must stay unchanged before it is picked up.")
    var settle: Double = 2

    @Option(help: "Seconds jobs in flight may run on after SIGTERM.")
    var grace: Double = 30

    @Option(help: "First retry delay in seconds; doubles with each attempt.")
    var backoff: Double = 5

    @Option(help: "Log format: text or json.")
    var logFormat: LogFormat = .text

    func validate() throws {
        guard jobs >= 1 else { throw ValidationError("--jobs must be at least 1") }
        guard maxAttempts >= 1 else { throw ValidationError("--max-attempts must be at least 1") }
        guard jobTimeout > 0 else { throw ValidationError("--job-timeout must be positive") }
    }

    func run() async throws {
        let logger = Log.make(label: "ingestd.watch", format: logFormat, defaultLevel: .info)
        let preset: Preset
        do {
            preset = try presetOption.load()
        } catch {
            throw Report.fail(error, json: false)
        }
        let runner = JobRunner(executable: Executable.path, presetArgument: presetOption.resolvedArgument(),
                               timeoutSeconds: jobTimeout,
                               limits: ChildLimits(memoryMB: jobMemoryMb, cpuSeconds: Int(jobTimeout * 4)))
        let configuration = DaemonConfiguration(
            spool: SpoolLayout(root: spool), cdn: URL(fileURLWithPath: cdn).standardizedFileURL.path, preset: preset,
            runner: runner, jobs: jobs, maxAttempts: maxAttempts, backoffSeconds: backoff, settleSeconds: settle,
            graceSeconds: grace)
        let service = SpoolService(configuration: configuration, logger: logger)
        let group = ServiceGroup(configuration: .init(
            services: [.init(service: service)],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger))
        try await group.run()
    }
}

enum LogFormat: String, ExpressibleByArgument, CaseIterable {
    case text, json
}

enum Executable {
    /// This binary, for starting job processes.
    static var path: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }
}
