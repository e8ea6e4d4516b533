import Foundation
import Logging

/// River's rescuer, with the rest of a worker's upkeep: every quarter lease (at least every
/// poll) it puts the jobs whose lease ran out back in the queue and removes what their attempts
/// left in a directory CDN, finishes the deletions recorded and not completed (``VideoDeletion``),
/// measures the queue's depth and the store's clock, and records this host's heartbeat. The worker's claims and the job lifecycle are not its business.
struct JobRescuer: Sendable {
    let store: any JobStore
    let configuration: JobWorkerConfiguration
    let target: any OutputTarget
    let metrics: WorkerMetrics
    let logger: Logger

    /// How often upkeep is due.
    var every: Duration { max(configuration.poll, configuration.lease / 4) }

    /// One round. `ready`, `problem`: whether this host may claim, and why not; `running`: its
    /// jobs in flight.
    func round(ready: Bool, problem: String?, running: Int) async throws {
        let rescued = try await store.rescue(now: configuration.clock.now())
        if !rescued.isEmpty {
            metrics.leasesLost(rescued.count)
            logger.warning("leases expired: jobs back in the queue", metadata: ["attempts": "\(rescued)"])
            discard(rescued)
        }
        if let deletions = store as? any DeletionStore {
            await finishDeletions(VideoDeletion(store: deletions, target: target, inputs: configuration.storage))
            metrics.deletedVideos(try await deletions.deletionCounts())
        }
        metrics.queueDepth(try await store.depth())
        if let offset = try await store.clockOffset() { clockMeasured(offset) }
        try await store.beat(ready: ready, problem: problem, running: running)
    }

    /// The store's clock minus this host's: kept for webhook timestamps, exported, and warned
    /// about (once each time it crosses) past 5 s, where leases and logs start to disagree.
    private func clockMeasured(_ offset: Double) {
        let wasOff = abs(configuration.clock.offsetSeconds) > Self.clockWarning
        configuration.clock.set(offsetSeconds: offset)
        metrics.clockOffset(offset)
        let isOff = abs(offset) > Self.clockWarning
        if isOff, !wasOff {
            logger.warning("this host's clock disagrees with the database's; webhook timestamps use the database's (fix NTP)",
                           metadata: ["offsetSeconds": "\(String(format: "%.3f", offset))"])
        } else if wasOff, !isOff {
            logger.info("this host's clock agrees with the database's again", metadata: ["offsetSeconds": "\(String(format: "%.3f", offset))"])
        }
    }

    static let clockWarning = 5.0

    /// Deletions a command recorded and could not complete (an attempt still ran, or it was killed).
    private func finishDeletions(_ deletion: VideoDeletion) async {
        for outcome in await deletion.finishPending() {
            switch outcome.result {
            case .deleted: logger.info("deletion completed", metadata: ["id": "\(outcome.id)", "purged": "\(outcome.tombstone?.purge.count ?? 0)"])
            case .failed: logger.warning("deletion not completed; retried at the next upkeep", metadata: ["id": "\(outcome.id)", "error": "\(outcome.message)"])
            default: break
            }
        }
    }

    /// Removes what attempts whose lease ran out left (wherever they ran): a shown growing
    /// version is withdrawn (a player gets 404s, not a playlist that never ends) and goes with
    /// any staging. Only each attempt's own goes: its token names it, so a newer attempt's,
    /// already under way, stays.
    private func discard(_ expired: [ExpiredAttempt]) {
        Task.detached { [target] in
            for attempt in expired { await target.discardLeftovers(id: attempt.id, token: attempt.token) }
        }
    }
}
