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
    /// Whether this host claims now (a full disk, a missing CDN root, a fault's pause).
    private var gate: HostGate
    /// While the store does not answer.
    private var backoff = StoreBackoff()
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
        gate = HostGate(root: target.hostDirectory)
        rescuer = JobRescuer(store: store, configuration: configuration, target: target, metrics: metrics, logger: logger)
        (wakeups, wakeup) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// New work may be due (a producer queued some): claim now rather than at the next poll.
    public nonisolated func wake() { wakeup.yield() }

    public func run() async throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: target.hostDirectory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw IngestError.cannotWrite(path: target.hostDirectory, reason: "no such directory (a configured root is never created)")
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
        guard backoff.allows(.now) else { return [] }
        do {
            if !prepared {
                try await store.prepare()
                prepared = true
            }
            if upkeepDue {
                lastUpkeep = .now
                try await rescuer.round(ready: gate.problem == nil && !draining.value, problem: draining.value ? "draining" : gate.problem,
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
            if backoff.answered() { logger.info("job store reachable again") }
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
            let wait = backoff.failed(.now)
            logger.warning("job store unreachable; retrying", metadata: ["error": "\(error)", "inSeconds": "\(String(format: "%.1f", wait.seconds))"])
        }
        metrics.inFlight(running.count)
        return claims
    }

    /// Checks the host before claiming; says (once per change) why it claims nothing.
    private func hostReady() -> Bool {
        let check = HostHealth(cdn: target.hostDirectory, minFree: configuration.minFree, uploads: configuration.uploads).check()
        if let free = check.freeBytes { metrics.cdnFree(free) }
        if let free = check.scratchFreeBytes { metrics.scratchFree(free) }
        let verdict = gate.look(check, now: .now)
        if let problem = verdict.problem {
            if verdict.changed { logger.warning("host not ready: claiming nothing", metadata: ["why": "\(problem)"]) }
        } else if let was = verdict.was {
            logger.info("host ready again", metadata: ["was": "\(was)"])
        }
        metrics.hostReady(verdict.problem == nil, why: verdict.problem)
        return verdict.problem == nil
    }

    /// An attempt failed because of the host, not the upload: the job goes back uncharged and
    /// the host claims nothing for a while (``HostGate/fault(_:freeThen:now:)``); after a full
    /// disk (`outOfSpace`), not before space was freed either.
    func hostFault(_ problem: String, outOfSpace: Bool = false) {
        logger.warning("host fault: the job goes back uncharged; claiming nothing for now", metadata: ["why": "\(problem)"])
        let freeThen = outOfSpace ? HostHealth(cdn: target.hostDirectory, minFree: .bytes(0), uploads: nil).check() : nil
        gate.fault(problem, freeThen: freeThen, now: .now)
        metrics.hostReady(false, why: problem)
    }

    func published() { gate.published() }

    /// See ``HostGate/missingInput(confirmed:)``.
    func missingInput(confirmed: Bool) {
        if let problem = gate.missingInput(confirmed: confirmed) { hostFault(problem) }
    }

    func finished(_ id: String) {
        running.remove(id)
        metrics.inFlight(running.count)
        wakeup.yield()
    }
}
