import Foundation
import Logging
import ServiceLifecycle
import Transcode

/// The spool daemon: claims complete uploads, runs each in a child process, publishes to the
/// CDN directory atomically and files the original under archive/, rejected/ or failed/.
public actor SpoolService: Service {
    private let configuration: DaemonConfiguration
    private let spool: Spool
    private let events: EventLog
    private let metrics: Metrics
    private let logger: Logger
    private var running: Set<String> = []
    /// Names in `incoming/` whose `received` event is written.
    private var received: Set<String> = []
    /// When each upload in `incoming/` is complete (set up in `run()`, with the watcher).
    private var arrivalTracker: ArrivalTracker?
    private var draining = false
    /// Whether `queued/` may hold uploads the job queue does not have yet (at start-up, and
    /// after a hand-off failed).
    private var retryQueued = true
    private var wake: AsyncStream<Void>.Continuation?

    public init(configuration: DaemonConfiguration, logger: Logger) {
        self.configuration = configuration
        spool = Spool(layout: configuration.spool)
        events = EventLog(path: configuration.spool.events)
        metrics = Metrics(path: configuration.spool.metrics)
        self.logger = logger
    }

    public func run() async throws {
        try configuration.spool.create()
        try FileManager.default.createDirectory(atPath: configuration.cdn, withIntermediateDirectories: true)
        try configuration.outbox?.create()
        // A producer's CDN is shared: staging there belongs to workers on other hosts.
        if configuration.handOff == nil { removeStaleStaging() }
        if configuration.handOff != nil {
            try FileManager.default.createDirectory(atPath: configuration.spool.directory(.queued), withIntermediateDirectories: true)
        }
        let (wakeups, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        self.wake = wake
        let watcher = DirectoryWatcher(directory: configuration.spool.incoming) { wake.yield() }
        arrivalTracker = ArrivalTracker(settleSeconds: configuration.settleSeconds, admission: Admission(limits: configuration.preset.limits),
                                        watcher: watcher.isActive ? watcher : nil)
        let poll = configuration.pollSeconds
        let ticker = Task {
            while !Task.isCancelled {
                wake.yield()
                try? await Task.sleep(for: .seconds(poll))
            }
        }
        logger.info("watching", metadata: ["spool": "\(configuration.spool.root)", "cdn": "\(configuration.cdn)",
                                           "jobs": "\(configuration.jobs)", "inotify": "\(watcher.isActive)"])
        events.append("started", nil, ["pid": Int(getpid()), "jobs": configuration.jobs])
        await withGracefulShutdownHandler {
            await withTaskGroup(of: Void.self) { group in
                for await _ in wakeups {
                    if draining { break }
                    for job in nextJobs() {
                        group.addTask { await self.process(job.0, lock: job.1) }
                    }
                    if let handOff = configuration.handOff, retryQueued {
                        retryQueued = false
                        group.addTask { await self.queueWaiting(handOff) }
                    }
                }
                let grace = configuration.graceSeconds
                let deadline = Task {
                    try await Task.sleep(for: .seconds(grace))
                    self.stopInFlight()
                }
                await group.waitForAll()
                deadline.cancel()
            }
        } onGracefulShutdown: {
            Task { await self.beginDrain() }
        }
        ticker.cancel()
        watcher.stop()
        events.append("stopped", nil, ["pid": Int(getpid())])
        logger.info("stopped")
    }

    private func beginDrain() {
        guard !draining else { return }
        draining = true
        logger.info("shutting down: no new claims, waiting for jobs in flight", metadata: ["inFlight": "\(running.count)"])
        wake?.yield()
    }

    private func stopInFlight() {
        stopFlag.set()
        logger.warning("grace period over: stopping jobs in flight; they stay queued", metadata: ["inFlight": "\(running.count)"])
    }

    /// Picks what to start now: orphaned or retry-due jobs first, then complete arrivals.
    private func nextJobs() -> [(JobRecord, JobLock)] {
        var started: [(JobRecord, JobLock)] = []
        var free = configuration.jobs - running.count
        let now = Date()
        for (record, lock) in spool.adoptOrphans(limit: max(0, free), now: now) {
            running.insert(record.id)
            started.append((record, lock))
            free -= 1
        }
        guard let scan = arrivalTracker?.scan(spool.arrivals) else { return started }
        let arrivals = scan.arrivals
        if scan.overflowed {
            logger.warning("inotify queue overflowed: events were lost; incoming/ is judged by settling until it empties",
                           metadata: ["entries": "\(arrivals.count)"])
            Task { await metrics.watchOverflowed() }
        }
        for arrival in arrivals {
            if !received.contains(arrival.name) {
                received.insert(arrival.name)
                events.append("received", nil, ["name": arrival.name, "bytes": Int(arrival.size)])
            }
            guard free > 0, case .complete(let announced)? = arrivalTracker?.verdict(arrival, now: now) else { continue }
            if !announced {
                logger.warning("found by the rescan with no inotify event for it (a watcher bug)", metadata: ["name": "\(arrival.name)"])
                Task { await metrics.foundByRescan() }
            }
            do {
                guard let (record, lock) = try spool.claim(arrival, cdn: configuration.cdn) else { continue }
                received.remove(arrival.name)
                running.insert(record.id)
                started.append((record, lock))
                free -= 1
                events.append("claimed", record.id, ["name": arrival.name, "pid": Int(getpid())])
            } catch {
                logger.error("claim failed", metadata: ["name": "\(arrival.name)", "error": "\(error)"])
            }
        }
        let waiting = ((try? FileManager.default.contentsOfDirectory(atPath: configuration.spool.directory(.work))) ?? [])
            .filter { !$0.hasPrefix(".") }.count - running.count
        let queued = arrivals.count + waiting
        Task { await metrics.gauges(queueDepth: max(0, queued), inFlight: running.count) }
        return started
    }

    private func process(_ initial: JobRecord, lock: JobLock) async {
        var record = initial
        let started = ContinuousClock.now
        let layout = configuration.spool
        let directory = layout.job(record.id)
        let holder = layout.upload(record.id)
        let output = "\(configuration.cdn)/\(record.id)"
        let log = logger.with(["id": "\(record.id)"])
        log.info("job started", metadata: ["attempt": "\(record.attempts + 1)"])

        let outcome: JobOutcome
        if FileManager.default.fileExists(atPath: "\(output)/manifest.json") {
            // Published by an attempt whose daemon died before filing the original.
            outcome = .published(JSONFile.read(JobResult.self, from: "\(directory)/result.json") ?? JobResult(ok: true))
        } else if let rejection = precheck(holder: holder) {
            outcome = rejection
        } else if let handOff = configuration.handOff {
            await handOver(record, to: handOff, log: log)
            lock.release()
            running.remove(record.id)
            wake?.yield()
            return
        } else {
            removeStaging(of: record.id)
            let progressWatch = Task { await self.reportProgress(id: record.id, path: "\(directory)/progress.json") }
            let stop = stopFlag
            outcome = await configuration.runner.run(input: .soleEntry(of: holder), output: output, jobDirectory: directory) { stop.value }
            progressWatch.cancel()
            removeStaging(of: record.id)  // a killed job process cannot clean up after itself
        }
        let seconds = (ContinuousClock.now - started).seconds
        // Each event (log line, webhook) is written before the upload is filed: a crash between
        // the two repeats the event on restart (at least once) rather than losing it, and whoever
        // sees the upload filed can rely on its event being there.
        do {
            switch outcome {
            case .published(let result):
                events.append("published", record.id, ["output": output, "seconds": seconds, "duration": result.durationSeconds ?? 0])
                try configuration.outbox?.record(UploadEvent.published(job: record.id, manifest: FileManager.default.contents(atPath: "\(output)/manifest.json")))
                try spool.finish(record, as: .archive)
                await metrics.jobEnded(result: "published", seconds: seconds, realtimeFactor: result.speed)
                log.info("published", metadata: ["output": "\(output)", "seconds": "\(seconds)"])
            case .rejected(let code, let work):
                let message = work.replacingOccurrences(of: directory, with: layout.job(record.id, in: .rejected))
                events.append("rejected", record.id, ["code": code, "message": message])
                try configuration.outbox?.record(UploadEvent.refused("upload.rejected", job: record.id, uploadID: Upload.declaredID(of: .soleEntry(of: holder)),
                                                                     code: code, message: message, attempts: record.attempts + 1))
                try spool.finish(record, as: .rejected, reason: Reason(code: code, message: message, attempts: record.attempts + 1))
                await metrics.jobEnded(result: "rejected", seconds: seconds, realtimeFactor: nil)
                log.warning("rejected", metadata: ["code": "\(code)", "message": "\(message)"])
            case .retryable(let code, let work):
                let message = work.replacingOccurrences(of: directory, with: layout.job(record.id, in: .failed))
                record.attempts += 1
                record.lastError = message
                if record.attempts >= configuration.maxAttempts {
                    events.append("failed", record.id, ["code": code, "message": message, "attempts": record.attempts])
                    try configuration.outbox?.record(UploadEvent.refused("upload.failed", job: record.id, uploadID: Upload.declaredID(of: .soleEntry(of: holder)),
                                                                         code: code, message: message, attempts: record.attempts))
                    try spool.finish(record, as: .failed, reason: Reason(code: code, message: message, attempts: record.attempts))
                    await metrics.jobEnded(result: "failed", seconds: seconds, realtimeFactor: nil)
                    log.error("failed", metadata: ["code": "\(code)", "message": "\(message)", "attempts": "\(record.attempts)"])
                } else {
                    let delay = min(300, configuration.backoffSeconds * pow(2, Double(record.attempts - 1)))
                    record.notBefore = Date().addingTimeInterval(delay)
                    events.append("retry", record.id, ["code": code, "message": message, "attempts": record.attempts, "delay": delay])
                    try spool.update(record)
                    await metrics.jobEnded(result: "retried", seconds: seconds, realtimeFactor: nil)
                    log.warning("will retry", metadata: ["code": "\(code)", "message": "\(message)", "in": "\(delay)"])
                }
            case .interrupted:
                events.append("interrupted", record.id, [:])
                log.info("interrupted; left queued")
            }
        } catch {
            log.error("cannot file job", metadata: ["error": "\(error)"])
        }
        lock.release()
        running.remove(record.id)
        wake?.yield()
    }

    /// Moves a checked upload to `queued/<id>/` and queues it. If the queue cannot be reached
    /// the upload waits there (`enqueued` missing) and ``queueWaiting(_:)`` tries again.
    private func handOver(_ record: JobRecord, to handOff: any JobHandOff, log: Logger) async {
        do {
            try spool.finish(record, as: .queued)
        } catch {
            log.error("cannot move the upload to queued/", metadata: ["error": "\(error)"])
            return
        }
        await enqueue(record.id, handOff: handOff, log: log)
    }

    /// Returns false when the queue could not be reached (the upload waits in `queued/`).
    @discardableResult
    private func enqueue(_ id: String, handOff: any JobHandOff, log: Logger) async -> Bool {
        let layout = configuration.spool
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
        let directory = configuration.spool.directory(.queued)
        for id in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] where !id.hasPrefix(".") {
            guard !FileManager.default.fileExists(atPath: "\(directory)/\(id)/enqueued") else { continue }
            // Still unreachable: stop this pass; the next wake-up starts another.
            guard !draining, await enqueue(id, handOff: handOff, log: logger.with(["id": "\(id)"])) else { return }
        }
    }

    /// Checks that need no decoding: the upload's kind and size.
    private func precheck(holder: String) -> JobOutcome? {
        guard let raw = RawPath.entries(of: holder).first else { return .rejected(code: "missing", message: "\(holder): vanished") }
        let input = "\(holder)/\(String(decoding: raw, as: UTF8.self))"
        return UploadPrecheck.check(RawPath(holder, raw), display: input, limits: configuration.preset.limits)
            .map { .rejected(code: $0.code, message: $0.message) }
    }

    private func reportProgress(id: String, path: String) async {
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(2))
            if let progress = JSONFile.read(JobProgress.self, from: path) {
                events.append("progress", id, ["fraction": progress.fraction, "speed": progress.speed])
            }
        }
    }

    /// Staging directories of this job's earlier or killed attempts (we hold the job's lock).
    private func removeStaging(of id: String) {
        for name in ((try? FileManager.default.contentsOfDirectory(atPath: configuration.cdn)) ?? []) where name.hasPrefix(".\(id).staging-") {
            try? FileManager.default.removeItem(atPath: "\(configuration.cdn)/\(name)")
        }
    }

    /// Staging directories of job processes that no longer exist (killed mid-publish).
    private func removeStaleStaging() {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: configuration.cdn)) ?? []
        for name in names where name.hasPrefix(".") && name.contains(".staging-") {
            let pid = name.components(separatedBy: ".staging-").last?.split(separator: "-").first.flatMap { Int32($0) } ?? 0
            if pid <= 0 || kill(pid, 0) != 0 {
                try? FileManager.default.removeItem(atPath: "\(configuration.cdn)/\(name)")
                logger.info("removed stale staging", metadata: ["path": "\(name)"])
            }
        }
    }

    /// Read from the child-runner's polling loop without hopping onto the actor.
    nonisolated let stopFlag = StopFlag()
}
