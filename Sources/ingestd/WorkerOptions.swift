import ArgumentParser
import Fleet
import Foundation
import ObjectStorage
import Storage
import Ingest
import Logging
import ServiceLifecycle
import Transcode

/// The options of every command that runs a ``JobWorker`` (`watch`, `worker`): where jobs are
/// published, how many run at once, their limits, retries and drain, metrics, webhooks, logs.
struct WorkerOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "CDN root (must exist); each job is published as CDN/<id>/. Or a bucket, s3://bucket/prefix: each job as CDN/<id>/t<token>/, named by its row (`worker`) or by CDN/<id>/current.json (`watch`) (docs/STORAGE.md).",
        valueName: "dir"))
    var cdn: String

    @OptionGroup var storage: StorageOption

    @Flag(help: ArgumentHelp("""
        Show nothing before a video is done (for uploads held for moderation). By default a \
        video in a directory CDN is played while it is made: CDN/<id>/master.m3u8 appears as \
        soon as every rung has its first seconds (docs/OUTPUT.md).
        """))
    var hold = false

    @Option(help: ArgumentHelp("Who may play the videos by default: public, or signed (only URLs signed with the playback key play them: docs/OUTPUT.md). An upload or its producer may ask signed; none makes public what this signs.", valueName: "policy"))
    var playback: PlaybackPolicy = .public

    @Option(name: .customLong("jobs"), help: ArgumentHelp("Jobs run at once (default: half the cores, at least 1).", valueName: "n"))
    var jobsOption: Int?

    /// `--jobs`, or half the cores (at least 1).
    var jobs: Int { jobsOption ?? max(1, ProcessInfo.processInfo.activeProcessorCount / 2) }

    @Option(help: ArgumentHelp("""
        Seconds a video shown while it grows must keep ahead of its earliest viewer: under it, \
        jobs not yet shown wait (stopped, their wait not charged to --job-timeout) and none is \
        claimed, until every shown video is twice that ahead, and a shown video twice that ahead \
        yields to one under it; while one grows in view, the others \
        take turns, a shown video three times that ahead yields to them, and another is shown \
        only while every shown one is twice that ahead. Each margin is the one a video is left \
        with at its end at the pace it lists at lately. 0: nothing waits (docs/OUTPUT.md).
        """, valueName: "seconds"))
    var margin: Double = 4

    @Option(help: "Attempts before a job whose attempts crash, time out or fail goes to failed.")
    var maxAttempts: Int = 3

    @OptionGroup var limits: JobLimitsOption

    @Option(help: "Seconds running jobs may go on after SIGTERM before they are stopped and put back.")
    var grace: Double = 30

    @Option(help: "First retry delay in seconds; doubles with each attempt (at most 300).")
    var backoff: Double = 5

    @Option(help: ArgumentHelp(
        "Free space the CDN's (and scratch's) file system must keep for this host to claim jobs: bytes, with K, M, G, T (e.g. 2G), or a share of the volume (e.g. 5%); 'auto' is 1% of the volume, at most 1G. A job that finds the disk full goes back to the queue uncharged either way.",
        valueName: "size"))
    var minFree: String = "auto"

    @Option(help: ArgumentHelp("Serve /metrics (Prometheus), /healthz and /readyz on this address.", valueName: "addr:port"))
    var http: String?

    @Option(help: "Log format: text or json.")
    var logFormat: LogFormat = .text

    @OptionGroup var webhookOption: WebhookOption

    func validate() throws {
        guard jobs >= 0 else { throw ValidationError("--jobs must not be negative") }
        guard maxAttempts >= 1 else { throw ValidationError("--max-attempts must be at least 1") }
        guard margin >= 0, margin.isFinite else { throw ValidationError("--margin must be a number of seconds, 0 or more") }
        guard grace >= 0, backoff >= 0 else {
            throw ValidationError("--grace and --backoff must not be negative")
        }
        if let http { _ = try Self.address(http) }
        guard FreeSpaceFloor(minFree) != nil else { throw ValidationError("--min-free must be a size such as 0, 500M or 2G, a share such as 5%, or auto; got \(minFree)") }
    }

    static func address(_ text: String) throws -> (host: String, port: Int) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port) else {
            throw ValidationError("--http must be ADDR:PORT, e.g. 127.0.0.1:9464")
        }
        return (String(text[..<colon]), port)
    }

    var cdnPath: String {
        S3Location.isURL(cdn) ? StorageOption.trimmed(cdn) : URL(fileURLWithPath: cdn).standardizedFileURL.path
    }

    /// Checks the CDN root: an existing directory (exit 78 otherwise), or for `s3://` a valid
    /// bucket prefix with credentials. Returns the bucket storage when a client can be made.
    func checkCDN(json: Bool = false) throws -> BucketStorage? {
        if S3Location.isURL(cdn) { return try storage.bucket(cdn, json: json).storage }
        try Self.requireRoot("--cdn", cdnPath)
        // s3:// inputs need a client too; without credentials they are a host fault, not a crash.
        return (try? S3Configuration.fromEnvironment(endpoint: storage.endpoint)).map { BucketStorage(client: S3Client(configuration: $0)) }
    }

    /// Refuses to start (exit 78) when a configured root is not an existing directory: ingestd
    /// never creates one, or a mount that is missing would become a directory on the root disk.
    static func requireRoot(_ option: String, _ path: String) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw Report.fail(MissingRoot(option: option, path: path), json: false)
        }
    }

    /// The worker's configuration; `presetArgument` is what job processes load when a job
    /// carries no preset of its own.
    func configuration(preset: Preset, presetArgument: String, lease: Duration, poll: Duration) -> JobWorkerConfiguration {
        let runner = limits.runner(presetArgument: presetArgument)
        var configuration = JobWorkerConfiguration(
            cdn: cdnPath, runner: runner, preset: preset, jobs: jobs, lease: lease,
            retry: RetryPolicy(maxAttempts: maxAttempts, backoff: .seconds(backoff)), grace: .seconds(grace), poll: poll)
        configuration.webhooks = webhookOption.url != nil
        configuration.minFree = FreeSpaceFloor(minFree) ?? .standard
        configuration.growing = !hold
        configuration.playback = playback
        configuration.margin = MarginGuard.Policy(pauseBelow: margin, resumeAbove: 2 * margin, yieldAbove: 3 * margin)
        return configuration
    }

    /// Runs `services` (and the `--http` server) until SIGTERM or SIGINT has drained them. On
    /// shutdown services stop in reverse order: list the job worker after what it needs.
    func run(_ services: [ServiceGroupConfiguration.ServiceConfiguration], metrics: WorkerMetrics, readyWindow: Duration,
             logger: Logger) async throws {
        // Every client that needed a secret from the environment is made: nothing else may read it.
        SecretEnvironment.forget()
        var services = services
        if let http {
            let (host, port) = try Self.address(http)
            services.insert(.init(service: HealthServer.make(host: host, port: port, metrics: metrics, readyWindow: readyWindow,
                                                             logger: logger)), at: 0)
        }
        let group = ServiceGroup(configuration: .init(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }
}

/// A configured root (`--cdn`, `--spool`) that is not an existing directory.
struct MissingRoot: Error, CustomStringConvertible {
    var option: String
    var path: String
    var detail = "no such directory (is it mounted?); ingestd never creates a configured root, create it first"
    var description: String { "\(option) \(path): \(detail)" }
}
