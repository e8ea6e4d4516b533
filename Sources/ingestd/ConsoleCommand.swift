import ArgumentParser
import Console
import Fleet
import Foundation
import Ingest
import Logging
import ObjectStorage
import Playback
import ServiceLifecycle

/// `ingestd console`: the operator's web console over the spool or the fleet's queue.
struct ConsoleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "console",
        abstract: "Serve the operator's web console: the queue, failures and hosts, live, with retry.",
        discussion: """
        Pages under /console/ over the spool's store (--spool) or the fleet's \
        queue (--database): state tabs with counts, a filter kept in the URL, each job's \
        attempts, limits, ladder, player and history in words, charts of the last hour and day \
        (published, rejected, failed per minute, time to playable p50/p95, queue depth, per \
        host), failures grouped by reason, leases and worker hosts, all following one shared \
        snapshot live (Server-Sent Events). Processes no jobs.
          ingestd console --spool /var/spool/ingestd --cdn /srv/cdn --http 127.0.0.1:8090 --console-tokens-file /etc/ingestd/console.tokens
          ingestd console --database-url-file /run/secrets/db --http 0.0.0.0:8090 --console-tokens-file /etc/ingestd/console.tokens --cdn-url https://cdn.example.com
        The tokens file (mode 600) holds one `read TOKEN` or `operate TOKEN` per line; scripts \
        send `Authorization: Bearer TOKEN`, browsers log in at /console/login. `read` sees \
        everything; `operate` may also retry failed (and rejected) jobs. Exit 78 when the file \
        is missing, readable by others or malformed; 69 when the database cannot be reached.
        See docs/CONSOLE.md.
        """
    )

    @Option(help: ArgumentHelp("Listen address.", valueName: "addr:port"))
    var http: String

    @Option(help: ArgumentHelp("File of console tokens, one `read TOKEN` or `operate TOKEN` per line (mode 600).", valueName: "file"))
    var consoleTokensFile: String

    @Option(help: ArgumentHelp("Single host: the spool the daemon (`watch`) runs on.", valueName: "dir"))
    var spool: String?

    @OptionGroup var databaseOption: DatabaseOption

    @Option(help: ArgumentHelp(
        "The CDN the workers publish to (a directory or s3://bucket/prefix): job pages show its posters and play its videos through the console itself, read-only, to logged-in operators, confined to this root. --cdn-url wins when both are given.",
        valueName: "dir|s3://bucket/prefix"))
    var cdn: String?

    @OptionGroup var storage: StorageOption

    @Option(help: ArgumentHelp("The playback key (plsec_…, mode 600): the job page's player signs its own 10-minute URL of a signed video played from --cdn-url.", valueName: "file"))
    var playbackKeyFile: String?

    @Option(help: ArgumentHelp("The public URL in front of the CDN: job pages play the ladder and show the poster from it.", valueName: "url"))
    var cdnUrl: String?

    @OptionGroup(title: "Preset (the limits each job's probe is shown against)")
    var presetOption: PresetOption

    @Option(help: ArgumentHelp("Seconds between reads of the shared snapshot when the store sends no notification (the spool's case). (default: 5 on a queue, 2 on a spool)", valueName: "seconds"))
    var refresh: Double?

    @Option(help: "Log format.")
    var logFormat: LogFormat = .text

    func validate() throws {
        guard (spool != nil) != databaseOption.isGiven else {
            throw ValidationError(spool == nil ? "give --spool DIR (single host) or --database URL (fleet)" : "--spool and --database exclude each other")
        }
        if let cdnUrl, URL(string: cdnUrl).map({ ["http", "https"].contains($0.scheme ?? "") && $0.host != nil }) != true {
            throw ValidationError("--cdn-url must be an http:// or https:// URL, got \(cdnUrl)")
        }
        if let refresh, !(0.2...300).contains(refresh) { throw ValidationError("--refresh must be 0.2 to 300 seconds") }
    }

    /// What `--cdn` names, read-only: a directory that exists (exit 78 otherwise), or a bucket prefix.
    func media() throws -> ConsoleMediaSource? {
        guard let cdn else { return nil }
        if S3Location.isURL(cdn) {
            let (prefix, bucket) = try storage.bucket(cdn)
            return ConsoleMediaSource(root: prefix, storage: bucket)
        }
        let root = URL(fileURLWithPath: cdn).standardizedFileURL.path
        try WorkerOptions.requireRoot("--cdn", root)
        return ConsoleMediaSource(root: root, storage: nil)
    }

    func run() async throws {
        let (host, port) = try WorkerOptions.address(http)
        let tokens = try Report.catching { try ConsoleTokens(path: consoleTokensFile) }
        let preset = try Report.catching { try presetOption.load() }
        let logger = Log.make(label: "ingestd.console", format: logFormat, defaultLevel: .info)
        var configuration = ConsoleServer.Configuration(host: host, port: port, tokens: tokens, cdnURL: cdnUrl, media: try media(),
                                                        fleet: spool == nil, limits: preset.limits)
        configuration.target = try cdn.map { try storage.target(cdn: $0, pointer: spool != nil, json: false) }
        configuration.playbackKey = try playbackKeyFile.map { file in try Report.catching { try PlaybackKey(path: file) } }
        if let spool {
            let layout = SpoolLayout(root: spool)
            try WorkerOptions.requireRoot("--spool", layout.root)
            configuration.refresh = .milliseconds(Int64((refresh ?? 2) * 1000))
            let store = SpoolStore(layout: layout)
            let server = try ConsoleServer.make(configuration, store: store, logger: logger)
            logger.info("console", metadata: ["http": "\(http)", "spool": "\(layout.root)"])
            try await ServiceGroup(configuration: .init(services: [server], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)).run()
            return
        }
        configuration.refresh = .milliseconds(Int64((refresh ?? 5) * 1000))
        let database = try databaseOption.resolve(jobs: 0)
        try await database.migrate(logger: logger)
        let postgres = database.makeClient(logger: logger)
        let store = PostgresStore.producer(JobQueue(client: postgres, logger: logger, timeout: database.callTimeout))
        let server = try ConsoleServer.make(configuration, store: store, logger: logger)
        logger.info("console (fleet)", metadata: ["http": "\(http)", "database": "\(database)"])
        try await ServiceGroup(configuration: .init(services: [postgres, server], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)).run()
    }
}
