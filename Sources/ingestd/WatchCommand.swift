import ArgumentParser
import Fleet
import Foundation
import Ingest
import Logging
import ServiceLifecycle
import Transcode
import Webhooks

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

        With --database URL the daemon feeds the fleet's PostgreSQL job queue instead: each \
        checked upload moves to SPOOL/queued/<id>/ (keep the spool on storage every worker can \
        read) and becomes a job there, for `ingestd worker` on any host. --jobs N also runs N of \
        the queue's jobs in this process; --jobs 0 runs none.

        With --webhook URL, every published, rejected or failed upload is also announced to the \
        app's backend by a signed POST (Standard Webhooks: webhook-id, webhook-timestamp, \
        webhook-signature headers; body {"type", "timestamp", "data"}). Events are kept in \
        SPOOL/outbox/ before the upload is filed and retried on the schedule until a 2xx answer; \
        `ingestd status` shows pending and dead deliveries.

        Examples:
          ingestd watch --spool /var/spool/ingestd --cdn /srv/cdn --jobs 2
          ingestd watch --spool /var/spool/ingestd --cdn /srv/cdn --webhook https://api.example.com/hooks/video \
            --webhook-secret-file /etc/ingestd/webhook.secret
          ingestd watch --spool /mnt/shared/spool --cdn /mnt/shared/cdn --database postgres://ingestd@db/ingestd --jobs 0
        """
    )

    @Option(help: ArgumentHelp("Spool directory (created if missing).", valueName: "dir"))
    var spool: String

    @Option(help: ArgumentHelp("CDN root; each upload is published as CDN/<id>/.", valueName: "dir"))
    var cdn: String

    @OptionGroup var presetOption: PresetOption

    @OptionGroup var databaseOption: DatabaseOption

    @OptionGroup var webhookOption: WebhookOption

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
        guard jobs >= (databaseOption.url == nil ? 1 : 0) else {
            throw ValidationError("--jobs must be at least 1 (0 only with --database, where the fleet's workers run the jobs)")
        }
        guard maxAttempts >= 1 else { throw ValidationError("--max-attempts must be at least 1") }
        guard jobTimeout > 0 else { throw ValidationError("--job-timeout must be positive") }
    }

    func run() async throws {
        let logger = Log.make(label: "ingestd.watch", format: logFormat, defaultLevel: .info)
        let preset: Preset
        let endpoint: WebhookEndpoint?
        do {
            preset = try presetOption.load()
            endpoint = try webhookOption.endpoint()
        } catch {
            throw Report.fail(error, json: false)
        }
        let runner = JobRunner(executable: Executable.path, presetArgument: presetOption.resolvedArgument(),
                               timeoutSeconds: jobTimeout,
                               limits: ChildLimits(memoryMB: jobMemoryMb, cpuSeconds: Int(jobTimeout * 4)))
        let cdnPath = URL(fileURLWithPath: cdn).standardizedFileURL.path
        var configuration = DaemonConfiguration(
            spool: SpoolLayout(root: spool), cdn: cdnPath, preset: preset,
            runner: runner, jobs: jobs, maxAttempts: maxAttempts, backoffSeconds: backoff, settleSeconds: settle,
            graceSeconds: grace)
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = []
        if let endpoint {
            configuration.outbox = configuration.spool.outbox
            do {
                try configuration.spool.outbox.create()
            } catch {
                throw Report.fail(error, json: false)
            }
            configuration.spool.outbox.prune(deliveredBefore: Date().addingTimeInterval(-7 * 86_400))
            services.append(.init(service: WebhookSender(endpoint: endpoint, outbox: configuration.spool.outbox, logger: logger)))
        }
        if databaseOption.url != nil {
            // Producer for the fleet: hand-offs are quick, so more run at once than jobs would.
            let database = try databaseOption.resolve()
            let client = database.makeClient(logger: logger)
            let queue = JobQueue(client: client, logger: logger)
            try await Self.migrate(queue, database: database)
            configuration.jobs = 8
            configuration.handOff = QueueHandOff(queue: queue, preset: String(decoding: preset.canonicalJSON(), as: UTF8.self))
            services.append(.init(service: client))
            if let endpoint {
                services.append(.init(service: WebhookSender(endpoint: endpoint, outbox: QueueOutbox(client: client, logger: logger), logger: logger)))
            }
            if jobs > 0 {
                var worker = WorkerConfiguration(cdn: cdnPath, runner: runner, jobs: jobs, lease: .seconds(60),
                                                 maxAttempts: maxAttempts, backoff: .seconds(backoff), grace: .seconds(grace))
                worker.webhooks = endpoint != nil
                services.append(.init(service: QueueWorker(configuration: worker, queue: queue, metrics: FleetMetrics(), logger: logger)))
            }
            logger.info("feeding the job queue", metadata: ["database": "\(database)", "jobsHere": "\(jobs)"])
        }
        services.append(.init(service: SpoolService(configuration: configuration, logger: logger)))
        let group = ServiceGroup(configuration: .init(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }

    /// Applies the queue's migrations before the daemon starts, so a wrong URL fails at once.
    private static func migrate(_ queue: JobQueue, database: DatabaseURL) async throws {
        do {
            _ = try await database.withClient(logger: Logger(label: "ingestd.db")) { try await QueueSchema.migrate($0, logger: Logger(label: "ingestd.db")) }
        } catch {
            throw Report.fail(QueueUnavailable(database: database, error: error), json: false)
        }
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
