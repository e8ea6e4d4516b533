import ArgumentParser
import Foundation
import Ingest
import Logging
import ServiceLifecycle
import Transcode
import Uploads

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Take resumable uploads (tus 1.0) straight from the app's phones into the spool or a fleet's bucket, and answer their status.",
        discussion: """
        The app's backend signs an upload URL per video (`ingestd upload-url`); the phone's tus \
        client POSTs to it, PATCHes the bytes in chunks and, after a dropped connection, asks \
        with HEAD where to go on. Single host (--spool): every acknowledged byte is fsynced \
        first, so kill -9 of the server loses nothing it acknowledged; the last byte makes the \
        upload a job in SPOOL/work/<id>/ (once, whatever is retried), which `ingestd watch` on \
        the same spool transcodes and publishes. Unfinished uploads are removed when their \
        token expires.

        Fleet mode (instead of --spool): --database URL (or --database-url-file FILE) and \
        --uploads s3://bucket/prefix (the workers' --uploads). Upload state is in PostgreSQL \
        (ingestd_uploads), bytes are S3 multipart parts of s3://bucket/prefix/<id>/<filename>, so \
        any serve host behind the load balancer continues an upload another started; an offset \
        is acknowledged only once its bytes are in the bucket and its row is committed. The last \
        byte queues one job for `ingestd worker`; /v1/jobs/<id> reads the queue. Give \
        --public-url for public URLs in completed statuses. \
        An upload set (upload-url --files N) is one object per file under s3://bucket/prefix/<id>/, \
        queued as one job (input that prefix) when its last file lands. Database pool: 12 \
        connections unless --database-connections says otherwise.

        Endpoints: /v1/uploads (tus: OPTIONS, POST, HEAD, PATCH, DELETE), /v1/jobs/<id> (the \
        job's status for the app), /openapi.yaml, /metrics, /healthz. Put TLS in front (a \
        load balancer or a reverse proxy). See docs/UPLOADS.md.

        Examples:
          ingestd serve --http 0.0.0.0:8080 --spool /var/spool/ingestd --upload-secret-file /etc/ingestd/upload.secret
          ingestd serve --http 127.0.0.1:8080 --spool spool --upload-secret-file upload.secret --public-url https://cdn.example.com
          ingestd serve --http 0.0.0.0:8080 --database-url-file /run/secrets/db --uploads s3://media/uploads --upload-secret-file /etc/ingestd/upload.secret --public-url https://cdn.example.com
        """)

    @Option(help: ArgumentHelp("Listen address.", valueName: "addr:port"))
    var http: String

    @Option(help: ArgumentHelp("signed: every upload plays only through signed URLs; public (default): those whose link (upload-url --playback) or tus metadata `playback` ask.", valueName: "policy"))
    var playback: PlaybackPolicy = .public

    @Option(help: ArgumentHelp("Single host: the spool `ingestd watch` runs on (must exist).", valueName: "dir"))
    var spool: String?

    @OptionGroup var databaseOption: DatabaseOption

    @Option(help: ArgumentHelp("Fleet mode: the bucket prefix the workers take uploads from (their --uploads); uploads go to <prefix>/<id>/<filename>.",
                               valueName: "s3://bucket/prefix"))
    var uploads: String?

    @OptionGroup var storage: StorageOption

    @Option(help: ArgumentHelp("Fleet mode: where request bodies wait for the bucket (at most one S3 part each), in a private directory of this process; on disk, not a tmpfs.", valueName: "dir"))
    var scratch: String = "/var/tmp"

    @OptionGroup var secret: UploadSecretOption

    @OptionGroup(title: "Preset (its limits hold every upload; a fleet queues each upload with it; give the spool's daemon the same one)")
    var presetOption: PresetOption

    /// Accepted and ignored, for units written before each job recorded where its video plays.
    @Option(help: .hidden)
    var cdn: String?

    @Option(help: ArgumentHelp("The public URL in front of the CDN (completed statuses give URLs under it).", valueName: "url"))
    var publicURL: String?

    @Option(help: "Requests writing upload bytes at once; more are answered 503 with Retry-After.")
    var maxUploads = 256

    @Option(help: ArgumentHelp("Seconds a connection may send nothing before it is closed; a body must also average --min-rate over each such window.",
                               valueName: "seconds"))
    var readTimeout: Double = 30

    @Option(help: ArgumentHelp("Slowest body accepted, bytes per second (slower requests end; their bytes are kept).", valueName: "bytes"))
    var minRate = 1024

    @Option(help: "Log format.")
    var logFormat: LogFormat = .text

    func validate() throws {
        guard maxUploads > 0 else { throw ValidationError("--max-uploads must be at least 1") }
        guard readTimeout >= 1 else { throw ValidationError("--read-timeout must be at least 1 second") }
        guard minRate >= 0 else { throw ValidationError("--min-rate must not be negative") }
        let fleet = databaseOption.database != nil || databaseOption.databaseUrlFile != nil || uploads != nil
        guard (spool != nil) != fleet else {
            throw ValidationError(spool == nil ? "give --spool DIR (single host) or --database URL with --uploads s3://bucket/prefix (fleet)"
                                               : "--spool (single host) and --database/--uploads (fleet) exclude each other")
        }
    }

    func run() async throws {
        let (host, port) = try WorkerOptions.address(http)
        let key = try secret.key()
        let logger = Log.make(label: "ingestd.serve", format: logFormat, defaultLevel: .info)
        let preset = try Report.catching { try presetOption.load() }
        var publicBase = publicURL
        while publicBase?.hasSuffix("/") == true { publicBase?.removeLast() }
        var configuration = UploadServer.Configuration(
            host: host, port: port, spool: "", publicURL: publicBase, secret: key, preset: preset,
            maxUploads: maxUploads, readTimeout: .milliseconds(Int64(readTimeout * 1000)), minBytesPerSecond: minRate)
        configuration.playback = playback
        guard let spool else { return try await runFleet(configuration, logger: logger) }
        let root = SpoolLayout(root: spool).root
        try WorkerOptions.requireRoot("--spool", root)
        configuration.spool = root
        let server = try Report.catching { try UploadServer.make(configuration, metrics: UploadMetrics(), logger: logger) }
        logger.info("serving uploads", metadata: ["http": "\(http)", "spool": "\(root)"])
        let group = ServiceGroup(configuration: .init(services: [server], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }
}
