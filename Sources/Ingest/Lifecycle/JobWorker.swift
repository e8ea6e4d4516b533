import Foundation
import Logging
import ServiceLifecycle

/// The job lifecycle, once for every store: claims as many jobs as it has free slots, runs each
/// attempt in a job process that only stages its output, renews the lease while it runs,
/// publishes the staging into `CDN/<id>/` under the job's fencing token and records the end
/// (``JobEnd``) with its event and webhook. Retries follow one ``RetryPolicy``. On graceful
/// shutdown it stops claiming, lets running jobs finish within the grace period, then stops
/// them and releases their jobs uncharged.
public actor JobWorker: Service {
    let store: any JobStore
    let configuration: JobWorkerConfiguration
    /// Where attempts' outputs go, chosen once from the configuration.
    nonisolated let target: any OutputTarget
    let metrics: WorkerMetrics
    let logger: Logger
    /// Keeps shown videos ahead of their viewers: the others' job processes wait, and nothing is
    /// claimed, while a shown video's margin is short.
    nonisolated let margins: MarginGuard
    /// Puts expired leases back in the queue, and the rest of the upkeep (``JobRescuer``).
    private let rescuer: JobRescuer
    private var running: Set<String> = []
    /// Set by graceful shutdown, at once and from any thread (no hop onto this actor, which a
    /// busy host may not schedule soon): from then on nothing is claimed.
    private nonisolated let draining = StopFlag()
    /// When expired leases were last rescued and the queue depth last measured.
    private var lastUpkeep: ContinuousClock.Instant?
    /// Why this host claims nothing now (a full disk, a missing CDN root), if it does not.
    private var hostProblem: String?
    /// After a host fault, no claim before this, even if the check passes (doubling pauses).
    private var hostPausedUntil: ContinuousClock.Instant?
    private var hostPause = Duration.seconds(5)
    /// Free bytes on the CDN's and the scratch's file systems when a job last found a disk full:
    /// no claim until one of them has ``spaceRegained`` more (`--min-free 0` alone would let the
    /// host claim into the same full disk after every pause), nor for 5 minutes: a job whose
    /// output alone outgrew the free space must not park the host for good.
    private var fullAt: (cdn: Int64?, scratch: Int64?, since: ContinuousClock.Instant)?
    static let spaceRegained: Int64 = 1 << 20
    /// Inputs in a row this host found missing that no other host had confirmed.
    private var unconfirmedMissing = 0
    /// While the store does not answer: no call before this (capped exponential backoff, jittered).
    private var storeRetryAt: ContinuousClock.Instant?
    private var storeBackoff = Duration.zero
    /// Whether the store was made usable (``JobStore/prepare()``): retried like any store call,
    /// so a worker started while its database is down waits for it, not ready, and honours
    /// SIGTERM meanwhile.
    private var prepared = false
    /// Set when the store refuses this worker's configuration before it was ever prepared.
    private var refused: (any Error)?
    private let wakeups: AsyncStream<Void>
    private let wakeup: AsyncStream<Void>.Continuation
    /// Set once the grace period is over: job processes are stopped and their jobs released.
    nonisolated let stopFlag = StopFlag()

    public init(store: any JobStore, configuration: JobWorkerConfiguration, metrics: WorkerMetrics, logger: Logger) {
        self.store = store
        self.configuration = configuration
        target = configuration.outputTarget()
        self.metrics = metrics
        self.logger = logger
        margins = MarginGuard(policy: configuration.margin, metrics: metrics)
        rescuer = JobRescuer(store: store, configuration: configuration, target: target, metrics: metrics, logger: logger)
        (wakeups, wakeup) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// New work may be due (a producer queued some): claim now rather than at the next poll.
    public nonisolated func wake() { wakeup.yield() }

    public func run() async throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: configuration.localRoot, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw IngestError.cannotWrite(path: configuration.localRoot, reason: "no such directory (a configured root is never created)")
        }
        let listener = Task { [store, wakeup] in await store.listen { wakeup.yield() } }
        let ticker = Task { [wakeup, poll = configuration.poll] in
            while !Task.isCancelled {
                wakeup.yield()
                try? await SteadyTimer.sleep(for: poll)
            }
        }
        let guarding = Task { [wakeup, margins] in await margins.watch { wakeup.yield() } }
        logger.info("worker started", metadata: ["cdn": "\(configuration.cdn)", "jobs": "\(configuration.jobs)"])
        await withGracefulShutdownHandler {
            await withTaskGroup(of: Void.self) { group in
                for await _ in wakeups {
                    if draining.value || refused != nil { break }
                    for job in await nextClaims() {
                        group.addTask { await self.process(job) }
                    }
                }
                if draining.value {
                    logger.info("shutting down: no new claims, waiting for jobs in flight", metadata: ["inFlight": "\(running.count)"])
                }
                let deadline = Task { [grace = configuration.grace] in
                    try await SteadyTimer.sleep(for: grace)
                    self.stopInFlight()
                }
                await group.waitForAll()
                deadline.cancel()
            }
        } onGracefulShutdown: { [draining, wakeup] in
            draining.set()
            wakeup.yield()
        }
        ticker.cancel()
        guarding.cancel()
        listener.cancel()
        if let refused { throw refused }
        logger.info("worker stopped")
    }

    private nonisolated func stopInFlight() {
        stopFlag.set()
        logger.warning("grace period over: stopping jobs in flight; they go back to the queue")
    }

    /// Claims as many due jobs as there are free slots the margin guard allows (no store call at
    /// all when none is free); when upkeep is due, the rescuer's round first (``JobRescuer``).
    private func nextClaims() async -> [ClaimedJob] {
        var claims: [ClaimedJob] = []
        let upkeepDue = lastUpkeep.map { ContinuousClock.now - $0 >= rescuer.every } ?? true
        guard upkeepDue || running.count < configuration.jobs else { return [] }
        if let storeRetryAt, ContinuousClock.now < storeRetryAt { return [] }
        do {
            if !prepared {
                try await store.prepare()
                prepared = true
            }
            if upkeepDue {
                lastUpkeep = .now
                try await rescuer.round(ready: hostProblem == nil && !draining.value, problem: draining.value ? "draining" : hostProblem,
                                        running: running.count)
            }
            let limit = margins.claims(free: configuration.jobs - running.count)
            if !draining.value, limit > 0, hostReady() {
                for job in try await store.claim(limit: limit) {
                    // A claim under way when the shutdown began is a job in flight (the store
                    // shows it running): it runs. One rescued and claimed again while its old
                    // attempt winds down here is given back uncharged, not started twice.
                    guard !running.contains(job.id) else {
                        _ = try? await store.release(job, target: target)
                        continue
                    }
                    claims.append(job)
                    running.insert(job.id)
                }
            }
            metrics.storeReachable()
            if storeRetryAt != nil { logger.info("job store reachable again") }
            storeRetryAt = nil
            storeBackoff = .zero
        } catch {
            if !prepared, (error as? StoreRefusal)?.isConfiguration == true {
                // Wrong credentials or database: no retry helps; say so and stop (exit 69).
                logger.error("the job store refuses this worker", metadata: ["error": "\(error)"])
                refused = error
                wakeup.yield()
                return []
            }
            lastUpkeep = nil
            metrics.storeUnreachable("\(error)")
            // One line per step: 0.5 s doubling to 30 s, each with ±20 % jitter so a fleet that
            // lost its database does not come back in step.
            storeBackoff = min(max(storeBackoff * 2, .milliseconds(500)), .seconds(30))
            let wait = storeBackoff * Double.random(in: 0.8...1.2)
            storeRetryAt = .now + wait
            logger.warning("job store unreachable; retrying", metadata: ["error": "\(error)", "inSeconds": "\(String(format: "%.1f", wait.seconds))"])
        }
        metrics.inFlight(running.count)
        return claims
    }

    /// Checks the host before claiming; says (once per change) why it claims nothing.
    private func hostReady() -> Bool {
        let check = HostHealth(cdn: configuration.localRoot, minFree: configuration.minFree, uploads: configuration.uploads).check()
        if let free = check.freeBytes { metrics.cdnFree(free) }
        if let free = check.scratchFreeBytes { metrics.scratchFree(free) }
        let paused = hostPausedUntil.map { ContinuousClock.now < $0 } ?? false
        if let full = fullAt, check.problem == nil {
            func regained(_ now: Int64?, _ then: Int64?) -> Bool { now.map { $0 >= (then ?? 0) + Self.spaceRegained } ?? false }
            if regained(check.freeBytes, full.cdn) || regained(check.scratchFreeBytes, full.scratch)
                || ContinuousClock.now - full.since > .seconds(300) { fullAt = nil }
        }
        let stillFull = fullAt.map { "a job found the disk full with \($0.cdn ?? 0) bytes free on \(configuration.localRoot): waiting for \(Self.spaceRegained) more" }
        if let problem = check.problem ?? stillFull ?? (paused ? hostProblem : nil) {
            if problem != hostProblem { logger.warning("host not ready: claiming nothing", metadata: ["why": "\(problem)"]) }
            hostProblem = problem
            metrics.hostReady(false, why: problem)
            return false
        }
        if let hostProblem { logger.info("host ready again", metadata: ["was": "\(hostProblem)"]) }
        hostProblem = nil
        metrics.hostReady(true, why: nil)
        return true
    }

    /// An attempt failed because of the host, not the upload: no claim until the host checks
    /// out again and a pause (5 s, doubling up to 5 min while faults repeat) has passed; after
    /// a full disk (`outOfSpace`), not before space was freed either.
    func hostFault(_ problem: String, outOfSpace: Bool = false) {
        logger.warning("host fault: the job goes back uncharged; claiming nothing for now", metadata: ["why": "\(problem)"])
        if outOfSpace {
            let now = HostHealth(cdn: configuration.localRoot, minFree: .bytes(0), uploads: nil).check()
            fullAt = (now.freeBytes, now.scratchFreeBytes, .now)
        }
        hostProblem = problem
        hostPausedUntil = .now + hostPause
        hostPause = min(hostPause * 2, .seconds(300))
        metrics.hostReady(false, why: problem)
    }

    func published() {
        hostPause = .seconds(5)
        unconfirmedMissing = 0
    }

    /// A host that keeps finding inputs missing which no other host has confirmed is the likely
    /// fault (a stale mount under a healthy root): after three in a row it claims nothing for a
    /// while, so it cannot turn the backlog over to be rejected on its say alone.
    func missingInput(confirmed: Bool) {
        guard !confirmed else { unconfirmedMissing = 0; return }
        unconfirmedMissing += 1
        if unconfirmedMissing >= 3 {
            unconfirmedMissing = 0
            hostFault("inputs missing on this host that no other host has confirmed, three in a row (is its view of the uploads stale?)")
        }
    }

    func finished(_ id: String) {
        running.remove(id)
        metrics.inFlight(running.count)
        wakeup.yield()
    }
}
