import Foundation
import Logging
import ServiceLifecycle
import Transcode

/// The spool's producer: watches `incoming/` and, as each upload is complete, claims it into
/// `work/<id>/` with its job record. There it is handed to the ``SpoolStore`` with its lock
/// held (``SpoolStore/take(_:_:)``), or, with a hand-off (`watch --database`), it moves on to
/// `queued/<id>/` and becomes a job of the fleet's queue.
public actor SpoolIntake: Service {
    /// Where claimed uploads go.
    public enum Destination: Sendable {
        /// The spool's own store, whose worker runs them.
        case spool(SpoolStore)
        /// The fleet's queue.
        case fleet(any JobHandOff)
    }

    private let spool: Spool
    /// Where jobs are published: ids never reuse a name there.
    private let cdn: String
    private let events: EventLog
    private let limits: Preset.Limits
    private let settleSeconds: Double
    private let pollSeconds: Double
    private let destination: Destination
    private let metrics: WorkerMetrics
    private let logger: Logger
    /// Names in `incoming/` whose `received` event is written.
    private var received: Set<String> = []
    /// Whether `queued/` may hold uploads the job queue does not have yet (at start-up, and
    /// after a hand-off failed).
    private var retryQueued = true

    /// `settleSeconds`: how long an upload written in place must stay unchanged; `pollSeconds`:
    /// the interval of the full rescan of `incoming/` (inotify wakes the intake sooner).
    public init(layout: SpoolLayout, cdn: String, limits: Preset.Limits, settleSeconds: Double, pollSeconds: Double = 1,
                destination: Destination, metrics: WorkerMetrics, logger: Logger) {
        spool = Spool(layout: layout)
        self.cdn = cdn
        events = EventLog(path: layout.events)
        self.limits = limits
        self.settleSeconds = settleSeconds
        self.pollSeconds = pollSeconds
        self.destination = destination
        self.metrics = metrics
        self.logger = logger
    }

    private var handOff: (any JobHandOff)? {
        guard case .fleet(let handOff) = destination else { return nil }
        return handOff
    }

    public func run() async throws {
        try spool.layout.create()
        if handOff != nil {
            try FileManager.default.createDirectory(atPath: spool.layout.directory(.queued), withIntermediateDirectories: true)
        }
        let (wakeups, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let watcher = DirectoryWatcher(directory: spool.layout.incoming) { wake.yield() }
        var tracker = ArrivalTracker(settleSeconds: settleSeconds, admission: Admission(limits: limits),
                                     watcher: watcher.isActive ? watcher : nil)
        let ticker = Task { [pollSeconds] in
            while !Task.isCancelled {
                wake.yield()
                try? await SteadyTimer.sleep(for: .seconds(pollSeconds))
            }
        }
        // Hand-offs are queued in the background, so a queue that hangs delays no arrival.
        let (handedOver, queueNext) = AsyncStream.makeStream(of: String?.self)
        let queuer = handOff.map { handOff in
            Task { for await id in handedOver { await queue(id, to: handOff) } }
        }
        logger.info("watching", metadata: ["spool": "\(spool.layout.root)", "inotify": "\(watcher.isActive)"])
        events.append("started", nil, ["pid": Int(getpid())])
        for await _ in wakeups.cancelOnGracefulShutdown() {
            let claimed = take(tracker.scan(spool.arrivals), &tracker)
            guard handOff != nil else { continue }
            // With those claimed by a daemon that died before handing them over.
            for (record, _) in claimed + spool.adoptOrphans(limit: 100) {
                do {
                    try spool.finish(record, as: .queued)
                    queueNext.yield(record.id)
                } catch {
                    logger.error("cannot move the upload to queued/", metadata: ["id": "\(record.id)", "error": "\(error)"])
                }
            }
            if retryQueued {
                retryQueued = false
                queueNext.yield(nil)
            }
        }
        queueNext.finish()
        queuer?.cancel()
        ticker.cancel()
        watcher.stop()
        events.append("stopped", nil, ["pid": Int(getpid())])
    }

    /// Claims every complete arrival of a scan into `work/`: there it is handed to the spool's
    /// store, or, for the fleet, returned (still locked) to be moved on to `queued/`.
    private func take(_ scan: ArrivalTracker.Scan, _ tracker: inout ArrivalTracker) -> [(JobRecord, JobLock)] {
        var claimed: [(JobRecord, JobLock)] = []
        if scan.overflowed {
            logger.warning("inotify queue overflowed: events were lost; incoming/ is judged by settling until it empties",
                           metadata: ["entries": "\(scan.arrivals.count)"])
            metrics.watchOverflowed()
        }
        let now = Date()
        for arrival in scan.arrivals {
            if !received.contains(arrival.name) {
                received.insert(arrival.name)
                events.append("received", nil, ["name": arrival.name, "bytes": Int(arrival.size)])
            }
            guard case .complete(let announced) = tracker.verdict(arrival, now: now) else { continue }
            if !announced {
                logger.warning("found by the rescan with no inotify event for it (a watcher bug)", metadata: ["name": "\(arrival.name)"])
                metrics.foundByRescan()
            }
            do {
                guard let (record, lock) = try spool.claim(arrival, cdn: cdn) else { continue }
                received.remove(arrival.name)
                events.append("claimed", record.id, ["name": arrival.name, "pid": Int(getpid())])
                switch destination {
                case .spool(let store): store.take(record, lock)
                case .fleet: claimed.append((record, lock))
                }
            } catch {
                logger.error("claim failed", metadata: ["name": "\(arrival.name)", "error": "\(error)"])
            }
        }
        return claimed
    }

    /// Queues the hand-off of `id`, or (nil) every upload in `queued/` the queue does not have yet.
    private func queue(_ id: String?, to handOff: any JobHandOff) async {
        if let id {
            await enqueue(id, handOff: handOff, log: logger.with(["id": "\(id)"]))
        } else {
            await queueWaiting(handOff)
        }
    }

    /// Returns false when the queue could not be reached (the upload waits in `queued/`).
    @discardableResult
    private func enqueue(_ id: String, handOff: any JobHandOff, log: Logger) async -> Bool {
        let layout = spool.layout
        do {
            try await handOff.enqueue(id: id, soleEntryOf: layout.upload(id, in: .queued))
            try JSONFile.write(["queuedAt": Date()], to: "\(layout.job(id, in: .queued))/enqueued")
            events.append("queued", id, ["upload": layout.upload(id, in: .queued)])
            log.info("handed to the job queue")
            return true
        } catch {
            retryQueued = true
            log.warning("job queue unreachable; the upload waits in queued/", metadata: ["error": "\(String(reflecting: error))"])
            return false
        }
    }

    /// Queues uploads left in `queued/` without `enqueued` (the queue was down, or the daemon
    /// died between the move and the insert).
    private func queueWaiting(_ handOff: any JobHandOff) async {
        let directory = spool.layout.directory(.queued)
        for id in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] where !id.hasPrefix(".") {
            guard !FileManager.default.fileExists(atPath: "\(directory)/\(id)/enqueued") else { continue }
            // Still unreachable: stop this pass; the next wake-up starts another.
            guard await enqueue(id, handOff: handOff, log: logger.with(["id": "\(id)"])) else { return }
        }
    }
}
