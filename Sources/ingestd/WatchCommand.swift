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
        is picked up once it has stayed unchanged for --settle seconds and is no longer being \
        written; an upload that grows past the size limit is refused at once.

        Each upload is claimed (moved to SPOOL/work/<id>/), transcoded in a child process with a \
        timeout and resource limits, and its original filed under SPOOL/archive/<id>/. The video \
        plays while it is made: the attempt writes its version CDN/<id>/t<token>/ in place, and \
        CDN/<id>/master.m3u8 points into it once every rung has its first seconds; shown videos \
        are kept --margin seconds ahead of their viewers (--hold: nothing shows before the end, \
        then one rename). With a bucket CDN (--cdn s3://bucket/prefix, credentials in the \
        environment, see docs/STORAGE.md) the attempt is uploaded under CDN/<id>/t<token>/ \
        and published by creating CDN/<id>/current.json (If-None-Match: *), which names it. Bad \
        uploads go to SPOOL/rejected/<id>/ and uploads whose retries ran out to SPOOL/failed/<id>/, \
        each with reason.json (code, message, attempts).

        SIGTERM or SIGINT: stop claiming, let jobs in flight finish for --grace seconds, then stop \
        them; they stay queued for the next start. kill -9 at any moment loses nothing: the next \
        start resumes what was in flight.

        With --database URL the daemon feeds the fleet's PostgreSQL job queue instead: each \
        upload moves to SPOOL/queued/<id>/ (keep the spool on storage every worker can read) and \
        becomes a job there, for `ingestd worker` on any host. --jobs N also runs N of the \
        queue's jobs in this process; --jobs 0 runs none.

        With --webhook URL, every upload that becomes playable, is published, rejected or failed \
        is also announced to the \
        app's backend by a signed POST (Standard Webhooks: webhook-id, webhook-timestamp, \
        webhook-signature headers; body {"type", "timestamp", "data"}). Events are kept in \
        SPOOL/outbox/ before the upload is filed and retried on the schedule until a 2xx answer; \
        `ingestd status` shows pending and dead deliveries.

        Examples:
          ingestd watch --spool /var/spool/ingestd --cdn /srv/cdn --jobs 2
          ingestd watch --spool /var/spool/ingestd --cdn s3://media/cdn --s3-endpoint http://seaweed:8333
          ingestd watch --spool /var/spool/ingestd --cdn /srv/cdn --webhook https://api.example.com/hooks/video \
            --webhook-secret-file /etc/ingestd/webhook.secret
          ingestd watch --spool /mnt/shared/spool --cdn /mnt/shared/cdn --database postgres://ingestd@db/ingestd --jobs 0
        """
    )

    @Option(help: ArgumentHelp("Spool directory (must exist; its subdirectories are created).", valueName: "dir"))
    var spool: String

    @OptionGroup var options: WorkerOptions

    @OptionGroup var presetOption: PresetOption

    @OptionGroup var databaseOption: DatabaseOption

    @Option(help: "Seconds an upload written in place must stay unchanged before it is picked up.")
    var settle: Double = 2

    func validate() throws {
        guard options.jobs >= (!databaseOption.isGiven ? 1 : 0) else {
            throw ValidationError("--jobs must be at least 1 (0 only with --database, where the fleet's workers run the jobs)")
        }
    }

    func run() async throws {
        try WorkerOptions.requireRoot("--spool", SpoolLayout(root: spool).root)
        let storage = try options.checkCDN()
        let logger = Log.make(label: "ingestd.watch", format: options.logFormat, defaultLevel: .info)
        let (preset, endpoint) = try Report.catching { (try presetOption.load(), try options.webhookOption.endpoint()) }
        let layout = SpoolLayout(root: spool)
        let metrics = WorkerMetrics(textfile: layout.metrics)
        var configuration = options.configuration(preset: preset, presetArgument: presetOption.resolvedArgument(),
                                                  lease: .seconds(60), poll: .seconds(1))
        configuration.storage = storage
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = []
        let store: (any JobStore)?
        let destination: SpoolIntake.Destination
        var database: DatabaseURL?
        if !databaseOption.isGiven {
            var outbox: Outbox?
            if let endpoint {
                outbox = layout.outbox
                try Report.catching { try layout.outbox.create() }
                services.append(.init(service: WebhookSender(endpoint: endpoint, outbox: layout.outbox, logger: logger)))
            }
            let spoolStore = SpoolStore(layout: layout, outbox: outbox)
            (store, destination) = (spoolStore, .spool(spoolStore))
            configuration.bucketPointer = true  // the spool names a bucket's version in `<id>/current.json`
        } else {
            let resolved = try databaseOption.resolve(jobs: options.jobs)
            database = resolved
            try await resolved.migrate(logger: logger)  // a wrong URL fails at once
            // The queue's inputs are this spool's queued/ entries: the spool is their uploads root
            // (give the fleet's workers --uploads SPOOL).
            let uploads = try Report.catching { () throws -> UploadsRoot in
                let root = try UploadsRoot(layout.root)
                try root.mark()
                return root
            }
            configuration.uploads = uploads
            let fleet = FleetWiring(database: resolved, configuration: &configuration, maxAttempts: options.maxAttempts, endpoint: endpoint,
                                    measuresClock: options.jobs > 0, logger: logger)
            destination = .fleet(QueueHandOff(store: fleet.store, submitter: Submitter(preset: preset, playback: options.playback)))
            services += fleet.services
            store = options.jobs == 0 ? nil : fleet.store
            logger.info("feeding the job queue", metadata: ["database": "\(resolved)", "jobsHere": "\(options.jobs)"])
        }
        let worker = store.map { JobWorker(store: $0, configuration: configuration, metrics: metrics, logger: logger) }
        services.append(.init(service: SpoolIntake(layout: layout, cdn: configuration.cdn, limits: preset.limits, settleSeconds: settle,
                                                   destination: destination, metrics: metrics, logger: logger)))
        if let worker { services.append(FleetWiring.service(worker)) }
        do {
            try await options.run(services, metrics: metrics, readyWindow: .seconds(10), logger: logger)
        } catch let error as QueueError {
            // The queue refused this daemon's worker (wrong credentials, no such database): 69.
            guard let database else { throw error }
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
