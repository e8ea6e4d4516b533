import ArgumentParser
import Fleet
import Foundation
import Ingest
import Logging
import ServiceLifecycle
import Webhooks

struct WorkerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "worker",
        abstract: "Run jobs from the PostgreSQL job queue; any number of workers on any number of hosts.",
        discussion: """
        Each worker claims due jobs (SELECT … FOR UPDATE SKIP LOCKED), runs each in a job process \
        exactly as `ingestd watch` does, renews the job's lease every --lease/3 seconds, and \
        publishes CDN/<id>/ with one rename, inside the transaction that records the job as \
        published and only while the attempt still holds the job (its fencing token). A worker \
        that dies or freezes loses its jobs after --lease seconds; another worker takes them, \
        and a frozen one that wakes up publishes nothing. New jobs wake idle workers through \
        LISTEN/NOTIFY; --poll is the fallback. Failures a retry can fix (crash, timeout, full \
        disk) are retried with backoff up to --max-attempts; bad uploads are rejected at once.

        SIGTERM or SIGINT: stop claiming, let running jobs finish for --grace seconds, then stop \
        them and put them back in the queue. A PostgreSQL restart is survived: the worker \
        reconnects with backoff.

        --http ADDR:PORT serves /metrics (Prometheus), /healthz and /readyz.

        --webhook URL: each job's end (published, rejected, failed) is recorded as a signed event \
        in the transaction that ends the job (table ingestd_webhooks) and POSTed by whichever \
        worker's sender takes it first (Standard Webhooks, retried on the schedule). Give every \
        worker the same --webhook and secret.

        Example (one per host, CDN and uploads on shared storage):
          ingestd worker --database postgres://ingestd@db/ingestd --cdn /mnt/cdn --jobs 2 --http 127.0.0.1:9464
        """
    )

    @OptionGroup var databaseOption: DatabaseOption

    @OptionGroup var webhookOption: WebhookOption

    @Option(help: ArgumentHelp("CDN root on shared storage; each job is published as CDN/<id>/.", valueName: "dir"))
    var cdn: String

    @Option(help: "Jobs run at once (default: half the cores, at least 1).")
    var jobs: Int = max(1, ProcessInfo.processInfo.activeProcessorCount / 2)

    @Option(help: "Seconds a claim stays valid without a heartbeat.")
    var lease: Double = 60

    @Option(help: "Attempts before a job whose attempts crash, time out or fail goes to `failed`.")
    var maxAttempts: Int = 3

    @Option(help: "Wall-clock limit of one job attempt, in seconds.")
    var jobTimeout: Double = 600

    @Option(help: "Address-space limit of a job process, in MiB.")
    var jobMemoryMb: Int = 8192

    @Option(help: "Seconds running jobs may go on after SIGTERM.")
    var grace: Double = 30

    @Option(help: "First retry delay in seconds; doubles with each attempt.")
    var backoff: Double = 5

    @Option(help: "Seconds between queue checks when no notification arrives.")
    var poll: Double = 2

    @Option(help: ArgumentHelp("Serve /metrics, /healthz and /readyz on this address.", valueName: "addr:port"))
    var http: String?

    @Option(help: "Log format: text or json.")
    var logFormat: LogFormat = .text

    func validate() throws {
        guard jobs >= 1 else { throw ValidationError("--jobs must be at least 1") }
        guard lease >= 1 else { throw ValidationError("--lease must be at least 1 second") }
        guard maxAttempts >= 1 else { throw ValidationError("--max-attempts must be at least 1") }
        guard jobTimeout > 0, grace >= 0, backoff >= 0, poll > 0 else {
            throw ValidationError("--job-timeout and --poll must be positive, --grace and --backoff not negative")
        }
        if let http { _ = try Self.address(http) }
    }

    static func address(_ text: String) throws -> (host: String, port: Int) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port) else {
            throw ValidationError("--http must be ADDR:PORT, e.g. 127.0.0.1:9464")
        }
        return (String(text[..<colon]), port)
    }

    func run() async throws {
        let database = try databaseOption.resolve()
        let logger = Log.make(label: "ingestd.worker", format: logFormat, defaultLevel: .info)
        let endpoint: WebhookEndpoint?
        do {
            endpoint = try webhookOption.endpoint()
        } catch {
            throw Report.fail(error, json: false)
        }
        let runner = JobRunner(executable: Executable.path, presetArgument: "default", timeoutSeconds: jobTimeout,
                               limits: ChildLimits(memoryMB: jobMemoryMb, cpuSeconds: Int(jobTimeout * 4)))
        let client = database.makeClient(logger: logger)
        let metrics = FleetMetrics()
        var configuration = WorkerConfiguration(
            cdn: URL(fileURLWithPath: cdn).standardizedFileURL.path, runner: runner, jobs: jobs, lease: .seconds(lease),
            maxAttempts: maxAttempts, backoff: .seconds(backoff), grace: .seconds(grace), poll: .seconds(poll))
        configuration.webhooks = endpoint != nil
        let worker = QueueWorker(configuration: configuration, queue: JobQueue(client: client, logger: logger),
                                 metrics: metrics, logger: logger)
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: client),
            .init(service: worker, successTerminationBehavior: .gracefullyShutdownGroup,
                  failureTerminationBehavior: .gracefullyShutdownGroup),
        ]
        if let endpoint {
            services.append(.init(service: WebhookSender(endpoint: endpoint, outbox: QueueOutbox(client: client, logger: logger), logger: logger)))
        }
        if let http {
            let (host, port) = try Self.address(http)
            services.append(.init(service: HealthServer.make(host: host, port: port, metrics: metrics,
                                                             readyWindow: .seconds(max(10, poll * 5, lease / 2)), logger: logger)))
        }
        let group = ServiceGroup(configuration: .init(services: services, gracefulShutdownSignals: [.sigterm, .sigint],
                                                      logger: logger))
        do {
            try await group.run()
        } catch {
            throw Report.fail(QueueUnavailable(database: database, error: error), json: false)
        }
    }
}
