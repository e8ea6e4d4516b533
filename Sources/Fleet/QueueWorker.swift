import Foundation
import Ingest
import Logging
import PostgresNIO
import ServiceLifecycle

/// How a queue worker runs.
public struct WorkerConfiguration: Sendable {
    /// Where each job is published, as `CDN/<id>/` (shared storage).
    public var cdn: String
    /// Runs each attempt in a job process; its preset argument is replaced by the job's preset.
    public var runner: JobRunner
    /// Jobs run at once.
    public var jobs: Int
    /// How long a claim stays valid without a heartbeat (renewed every third of it).
    public var lease: Duration
    /// Attempts before a retryable failure becomes `failed`.
    public var maxAttempts: Int
    /// First retry delay; doubles with each failed attempt (capped at 5 minutes).
    public var backoff: Duration
    /// On SIGTERM, how long running jobs may go on before they are stopped and released.
    public var grace: Duration
    /// Fallback poll interval (LISTEN/NOTIFY wakes the worker sooner); expired leases are
    /// rescued at this pace too.
    public var poll: Duration
    /// This worker's name in the job rows (`host/pid`).
    public var name: String
    /// Record a webhook event (`ingestd_webhooks`) with every job's end. Give every worker of a
    /// fleet the same setting.
    public var webhooks = false

    public init(cdn: String, runner: JobRunner, jobs: Int, lease: Duration, maxAttempts: Int, backoff: Duration,
                grace: Duration, poll: Duration = .seconds(2), name: String = WorkerConfiguration.defaultName) {
        self.cdn = cdn
        self.runner = runner
        self.jobs = jobs
        self.lease = lease
        self.maxAttempts = maxAttempts
        self.backoff = backoff
        self.grace = grace
        self.poll = poll
        self.name = name
    }

    public static var defaultName: String { "\(ProcessInfo.processInfo.hostName)/\(getpid())" }
}

/// A worker of the fleet: claims jobs from the PostgreSQL queue, runs each in a job process
/// exactly as the spool daemon does (staging only), renews its lease while the job runs, and
/// publishes the staging into `CDN/<id>/` under the job's fence. On graceful shutdown it stops
/// claiming, lets running jobs finish within the grace period, and releases the rest.
public actor QueueWorker: Service {
    private let configuration: WorkerConfiguration
    private let queue: JobQueue
    private let logger: Logger
    private let metrics: FleetMetrics
    private var running: Set<String> = []
    private var draining = false
    private var wake: AsyncStream<Void>.Continuation?
    /// Set once the grace period is over: job processes are stopped and their jobs released.
    nonisolated let stopFlag = StopFlag()

    public init(configuration: WorkerConfiguration, queue: JobQueue, metrics: FleetMetrics, logger: Logger) {
        self.configuration = configuration
        self.queue = queue
        self.metrics = metrics
        self.logger = logger
    }

    public func run() async throws {
        try FileManager.default.createDirectory(atPath: configuration.cdn, withIntermediateDirectories: true)
        try await QueueSchema.migrate(queue.client, logger: logger)
        metrics.databaseReachable()
        let (wakeups, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        self.wake = wake
        let listener = Task { await listen(wake) }
        let poll = configuration.poll
        let ticker = Task {
            while !Task.isCancelled {
                wake.yield()
                try? await Task.sleep(for: poll)
            }
        }
        logger.info("worker started", metadata: ["name": "\(configuration.name)", "cdn": "\(configuration.cdn)",
                                                 "jobs": "\(configuration.jobs)"])
        await withGracefulShutdownHandler {
            await withTaskGroup(of: Void.self) { group in
                for await _ in wakeups {
                    if draining { break }
                    for claim in await nextClaims() {
                        group.addTask { await self.process(claim) }
                    }
                }
                let grace = configuration.grace
                let deadline = Task {
                    try await Task.sleep(for: grace)
                    self.stopInFlight()
                }
                await group.waitForAll()
                deadline.cancel()
            }
        } onGracefulShutdown: {
            Task { await self.beginDrain() }
        }
        ticker.cancel()
        listener.cancel()
        logger.info("worker stopped")
    }

    private func beginDrain() {
        guard !draining else { return }
        draining = true
        logger.info("shutting down: no new claims, waiting for jobs in flight", metadata: ["inFlight": "\(running.count)"])
        wake?.yield()
    }

    private nonisolated func stopInFlight() {
        stopFlag.set()
        logger.warning("grace period over: stopping jobs in flight; they go back to the queue")
    }

    /// Waits on LISTEN for new jobs, reconnecting with backoff when the connection drops.
    private func listen(_ wake: AsyncStream<Void>.Continuation) async {
        var delay = Duration.milliseconds(200)
        while !Task.isCancelled {
            do {
                try await queue.client.withConnection { connection in
                    try await connection.listen(on: JobQueue.channel) { notifications in
                        delay = .milliseconds(200)
                        wake.yield()  // catch up with anything queued while not listening
                        for try await _ in notifications { wake.yield() }
                    }
                }
            } catch {
                if Task.isCancelled { return }
                logger.debug("listen failed; reconnecting", metadata: ["error": "\(describeDatabaseError(error))", "in": "\(delay)"])
            }
            try? await Task.sleep(for: delay)
            delay = min(delay * 2, .seconds(10))
        }
    }

    /// When expired leases were last rescued and the queue depth last measured.
    private var lastUpkeep: ContinuousClock.Instant?

    /// Claims as many due jobs as there are free slots (no query at all when none is free, so
    /// a busy fleet's notifications cost nothing); every quarter lease (at least every
    /// `poll`), also rescues expired leases and measures the queue's depth.
    private func nextClaims() async -> [JobQueue.Claim] {
        var claims: [JobQueue.Claim] = []
        let upkeepEvery = max(configuration.poll, configuration.lease / 4)
        let upkeepDue = lastUpkeep.map { ContinuousClock.now - $0 >= upkeepEvery } ?? true
        guard upkeepDue || running.count < configuration.jobs else { return [] }
        do {
            if upkeepDue {
                lastUpkeep = .now
                let rescued = try await queue.rescueExpiredLeases(maxAttempts: configuration.maxAttempts, webhooks: configuration.webhooks)
                if !rescued.isEmpty {
                    metrics.leasesLost(rescued.count)
                    logger.warning("leases expired: jobs back in the queue", metadata: ["ids": "\(rescued)"])
                }
                metrics.queueDepth(try await queueDepth())
            }
            while !draining, running.count < configuration.jobs,
                  let claim = try await queue.claim(worker: configuration.name, lease: configuration.lease) {
                claims.append(claim)
                running.insert(claim.id)
            }
            metrics.databaseReachable()
        } catch {
            lastUpkeep = nil
            logger.warning("queue unreachable; will retry", metadata: ["error": "\(describeDatabaseError(error))"])
        }
        metrics.inFlight(running.count)
        return claims
    }

    private func queueDepth() async throws -> Int {
        let rows = try await queue.client.query("SELECT count(*)::bigint FROM ingestd_jobs WHERE state = 'queued'", logger: logger)
        for try await count in rows.decode(Int64.self) { return Int(count) }
        return 0
    }

    private func finished(_ id: String) {
        running.remove(id)
        metrics.inFlight(running.count)
        wake?.yield()
    }

    /// One attempt of a claimed job, start to end.
    private nonisolated func process(_ claim: JobQueue.Claim) async {
        let log = logger.with(["id": "\(claim.id)", "attempt": "\(claim.attempts)"])
        let started = ContinuousClock.now
        let output = "\(configuration.cdn)/\(claim.id)"
        let lease = StopFlag()  // set once this attempt's lease is lost
        let heartbeat = Task { await keepLease(claim, watch: lease, log: log) }
        defer { heartbeat.cancel() }
        log.info("job started", metadata: ["input": "\(claim.input)"])

        let outcome: JobOutcome
        if FileManager.default.fileExists(atPath: "\(output)/manifest.json") {
            // Published by an earlier attempt whose worker died before recording it.
            outcome = .published(JobResult(ok: true))
        } else {
            removeStaging(of: claim.id, before: claim.token)
            do {
                let scratch = try PrivateDirectory(prefix: "ingestd-job-")
                let presetPath = "\(scratch.path)/preset.json"
                try Data(claim.preset.utf8).write(to: URL(fileURLWithPath: presetPath))
                var runner = configuration.runner
                runner.presetArgument = presetPath
                let stop = stopFlag
                outcome = await runner.run(input: claim.jobInput, output: output, jobDirectory: scratch.path,
                                           stageOnly: true, attempt: claim.token) { stop.value || lease.value }
            } catch {
                outcome = .retryable(code: "internal", message: "cannot prepare the job: \(error)")
            }
        }
        heartbeat.cancel()
        let seconds = (ContinuousClock.now - started).seconds
        // A job process that was stopped or killed cannot remove its staging; only this
        // attempt's own is removed (a newer attempt's may be in the same directory).
        if case .published = outcome {} else { removeOwnStaging(claim, output: output) }
        if lease.value {
            removeOwnStaging(claim, output: output)
            metrics.jobEnded(result: "lease_lost", seconds: seconds, realtimeFactor: nil)
            log.warning("lease lost: the job was given to another worker; nothing published, staging removed")
            await finished(claim.id)
            return
        }
        await record(outcome, of: claim, output: output, seconds: seconds, log: log)
        await finished(claim.id)
    }

    /// Records how the attempt ended, retrying while the database is unreachable (for at most
    /// the lease: after that the job belongs to whoever rescues it).
    private nonisolated func record(_ outcome: JobOutcome, of claim: JobQueue.Claim, output: String, seconds: Double, log: Logger) async {
        let deadline = ContinuousClock.now + configuration.lease
        var delay = Duration.milliseconds(200)
        while true {
            do {
                switch outcome {
                case .published(let result):
                    try await publish(claim, staging: result.staging, output: output, log: log)
                    metrics.jobEnded(result: "published", seconds: seconds, realtimeFactor: result.speed)
                case .rejected(let code, let message):
                    guard try await queue.finish(claim, .rejected(code: code, message: message),
                                                 event: refusal("upload.rejected", claim, code: code, message: message)) != nil else {
                        throw JobQueue.FenceLost(id: claim.id, token: claim.token)
                    }
                    metrics.jobEnded(result: "rejected", seconds: seconds, realtimeFactor: nil)
                    log.warning("rejected", metadata: ["code": "\(code)", "message": "\(message)"])
                case .retryable(let code, let message):
                    let backoff = min(Duration.seconds(300), configuration.backoff * (1 << min(20, max(0, claim.attempts - 1))))
                    guard let state = try await queue.finish(claim, .retryable(code: code, message: message, backoff: backoff,
                                                                               maxAttempts: configuration.maxAttempts),
                                                             event: refusal("upload.failed", claim, code: code, message: message)) else {
                        throw JobQueue.FenceLost(id: claim.id, token: claim.token)
                    }
                    metrics.jobEnded(result: state == "failed" ? "failed" : "retried", seconds: seconds, realtimeFactor: nil)
                    log.warning(state == "failed" ? "failed" : "will retry", metadata: ["code": "\(code)", "message": "\(message)"])
                case .interrupted:
                    guard try await queue.finish(claim, .released) != nil else { throw JobQueue.FenceLost(id: claim.id, token: claim.token) }
                    log.info("interrupted; released to the queue")
                }
                return
            } catch let lost as JobQueue.FenceLost {
                if case .published(let result) = outcome, let staging = result.staging { try? FileManager.default.removeItem(atPath: staging) }
                metrics.jobEnded(result: "lease_lost", seconds: seconds, realtimeFactor: nil)
                log.warning("lease lost before recording the end: nothing published or recorded, staging removed",
                            metadata: ["why": "\(lost)"])
                return
            } catch {
                guard ContinuousClock.now + delay < deadline else {
                    if case .published(let result) = outcome, let staging = result.staging { try? FileManager.default.removeItem(atPath: staging) }
                    log.error("cannot record the job's end; its lease will expire and it will run again",
                              metadata: ["error": "\(describeDatabaseError(error))"])
                    return
                }
                log.warning("database unreachable while recording; retrying", metadata: ["error": "\(describeDatabaseError(error))"])
                do {
                    try await Task.sleep(for: delay)
                } catch {
                    log.warning("stopped before the job's end was recorded; its lease will expire and it will run again")
                    return
                }
                delay = min(delay * 2, .seconds(5))
            }
        }
    }

    /// The fenced publish: the staging is renamed into `CDN/<id>` only while this attempt holds
    /// the job, in the transaction that records it as published.
    private nonisolated func publish(_ claim: JobQueue.Claim, staging: String?, output: String, log: Logger) async throws {
        let manifestPath = "\(output)/manifest.json"
        let existing = FileManager.default.contents(atPath: manifestPath)
        let manifest = existing ?? staging.flatMap { FileManager.default.contents(atPath: "\($0)/manifest.json") } ?? Data("{}".utf8)
        let event = configuration.webhooks ? UploadEvent.published(job: claim.id, manifest: manifest) : nil
        try await queue.publish(claim, output: output, manifest: String(decoding: manifest, as: UTF8.self), event: event) {
            guard let staging else { return }  // already in place (an earlier attempt's rename)
            let staged = StagedDirectory(destination: output, staging: staging)
            if FileManager.default.fileExists(atPath: manifestPath) {
                staged.discard()
            } else {
                try staged.publish(synced: true)  // the job process flushed it
            }
        }
        log.info("published", metadata: ["output": "\(output)"])
    }

    /// The webhook event of a refusal, when webhooks are on (recorded only if the job ends so).
    private nonisolated func refusal(_ type: String, _ claim: JobQueue.Claim, code: String, message: String) -> OutboxEvent? {
        guard configuration.webhooks else { return nil }
        return UploadEvent.refused(type, job: claim.id, uploadID: Upload.declaredID(of: claim.jobInput), code: code,
                                   message: message, attempts: claim.attempts)
    }

    /// Renews the lease every third of it. A renewal refused means the job was given away;
    /// renewals that keep failing for a whole lease mean it may have been: either way the
    /// job process is stopped (`watch` is set).
    private nonisolated func keepLease(_ claim: JobQueue.Claim, watch: StopFlag, log: Logger) async {
        let every = configuration.lease / 3
        var lastRenewal = ContinuousClock.now
        while !Task.isCancelled {
            try? await Task.sleep(for: every)
            if Task.isCancelled { return }
            do {
                if try await queue.heartbeat(claim, lease: configuration.lease) {
                    lastRenewal = .now
                    metrics.databaseReachable()
                } else {
                    watch.set()
                    metrics.leasesLost(1)
                    log.warning("lease lost (the job belongs to another attempt now): stopping the job process")
                    return
                }
            } catch {
                if ContinuousClock.now - lastRenewal >= configuration.lease {
                    watch.set()
                    log.warning("lease not renewed for a whole lease period: stopping the job process",
                                metadata: ["error": "\(describeDatabaseError(error))"])
                    return
                }
            }
        }
    }

    /// Staging directories of earlier attempts of this job (their owners lost the job; a
    /// newer attempt cannot exist while this one holds the lease).
    private nonisolated func removeStaging(of id: String, before token: Int64) {
        let prefix = StagedDirectory.stagingPrefix(of: id)
        for name in (try? FileManager.default.contentsOfDirectory(atPath: configuration.cdn)) ?? [] where name.hasPrefix(prefix) {
            let suffix = name.dropFirst(prefix.count)
            if let attempt = suffix.hasPrefix("t") ? Int64(suffix.dropFirst()) : nil, attempt >= token { continue }
            try? FileManager.default.removeItem(atPath: "\(configuration.cdn)/\(name)")
        }
    }

    /// This attempt's staging, if its job process left one.
    private nonisolated func removeOwnStaging(_ claim: JobQueue.Claim, output: String) {
        let url = URL(fileURLWithPath: output)
        let staging = url.deletingLastPathComponent().appendingPathComponent(StagedDirectory.stagingPrefix(of: url.lastPathComponent) + "t\(claim.token)")
        try? FileManager.default.removeItem(at: staging)
    }
}
