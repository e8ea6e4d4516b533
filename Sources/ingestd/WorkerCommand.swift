import ArgumentParser
import Fleet
import Foundation
import ObjectStorage
import Ingest
import Logging
import ServiceLifecycle
import Transcode
import Webhooks

struct WorkerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "worker",
        abstract: "Run jobs from the PostgreSQL job queue; any number of workers on any number of hosts.",
        discussion: """
        Each worker claims due jobs (SELECT … FOR UPDATE SKIP LOCKED), runs each in a job process \
        exactly as `ingestd watch` does, renews the job's lease every --lease/3 seconds, and \
        publishes CDN/<id>/ (its pointers into the attempt's version t<token>/, shown while it \
        grows; --hold: one rename at the end), inside the transaction that records the job as \
        published and only while the attempt still holds the job (its fencing token). A worker \
        that dies or freezes loses its jobs after --lease seconds; another worker takes them, \
        and a frozen one that wakes up publishes nothing. New jobs wake idle workers through \
        LISTEN/NOTIFY; --poll is the fallback. Failures a retry can fix (crash, timeout, full \
        disk) are retried with backoff up to --max-attempts; bad uploads are rejected at once.

        SIGTERM or SIGINT: stop claiming, let running jobs finish for --grace seconds, then stop \
        them and put them back in the queue. A PostgreSQL restart is survived: the worker \
        reconnects with backoff.

        --http ADDR:PORT serves /metrics (Prometheus), /healthz and /readyz.

        --webhook URL: each job's video becoming playable and its end (published, rejected, \
        failed) is recorded as a signed event \
        in the transaction that ends the job (table ingestd_webhooks) and POSTed by whichever \
        worker's sender takes it first (Standard Webhooks, retried on the schedule). Give every \
        worker the same --webhook and secret.

        Example (one per host, CDN and uploads on shared storage):
          ingestd worker --database-url-file /run/secrets/db --uploads /mnt/uploads --cdn /mnt/cdn --jobs 2 --http 127.0.0.1:9464

        --uploads (or INGESTD_UPLOADS) is required: a directory, a bucket prefix \
        (s3://bucket/prefix), or both (give it twice). A job whose input is not under one is \
        rejected (outside_uploads); a host that cannot read the directory, or does not find the \
        .ingestd-uploads marker `submit` leaves there, is not ready and claims nothing. With only \
        a bucket prefix the worker needs no shared volume and takes s3:// inputs only \
        (docs/STORAGE.md).

        Example (a bucket fleet, e.g. on Kubernetes; credentials in the environment):
          ingestd worker --database-url-file /run/secrets/db --uploads s3://media/uploads --cdn s3://media/cdn --jobs 2 --http 0.0.0.0:9464
        """
    )

    @OptionGroup var databaseOption: DatabaseOption

    @OptionGroup var options: WorkerOptions

    @OptionGroup var uploadsOption: UploadsOption

    @Option(help: "Seconds a claim stays valid without a heartbeat.")
    var lease: Double = 60

    @Option(help: "Seconds between queue checks when no notification arrives.")
    var poll: Double = 2

    func validate() throws {
        guard options.jobs >= 1 else { throw ValidationError("--jobs must be at least 1") }
        guard lease >= 1 else { throw ValidationError("--lease must be at least 1 second") }
        guard poll > 0 else { throw ValidationError("--poll must be positive") }
    }

    func run() async throws {
        let storage = try options.checkCDN()
        // A bucket fleet needs no shared volume: with only a bucket root it takes s3:// inputs only.
        let uploads = try uploadsOption.resolve(needsDirectory: false, needsBucket: false)
        let database = try databaseOption.resolve(jobs: options.jobs)
        let logger = Log.make(label: "ingestd.worker", format: options.logFormat, defaultLevel: .info)
        let endpoint = try Report.catching { try options.webhookOption.endpoint() }
        let metrics = WorkerMetrics()
        var configuration = options.configuration(preset: .builtIn, presetArgument: "default", lease: .seconds(lease), poll: .seconds(poll))
        configuration.uploads = uploads.directory
        configuration.bucketUploads = uploads.bucket
        configuration.storage = storage
        configuration.bucketInputsOnly = uploads.directory == nil
        let fleet = FleetWiring(database: database, configuration: &configuration, maxAttempts: options.maxAttempts, endpoint: endpoint,
                                measuresClock: true, logger: logger)
        let worker = JobWorker(store: fleet.store, configuration: configuration, metrics: metrics, logger: logger)
        let services = fleet.services + [FleetWiring.service(worker)]
        do {
            try await options.run(services, metrics: metrics, readyWindow: .seconds(max(10, poll * 5, lease / 2)), logger: logger)
        } catch {
            throw Report.fail(QueueUnavailable(database: database, error: error), json: false)
        }
    }
}
