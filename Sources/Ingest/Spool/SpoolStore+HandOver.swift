import Foundation

/// The one hand-over from the intake to the worker: a job the intake claimed into `work/` comes
/// with its lock held, and the next claim takes it as it is (no release and take again).
extension SpoolStore {
    /// The job handed over and not claimed yet (one at most), and the worker's wake (``listen(_:)``).
    struct HandedOver: Sendable {
        var job: (JobRecord, JobLock)?
        /// The latest claim found fewer jobs than it asked for: the worker has room.
        var wanted = true
        var wake: (@Sendable () -> Void)?

        /// The job handed over, for a claim of `limit` jobs; a claim of none lets it go, queued
        /// in `work/` for any daemon of the spool to take.
        mutating func next(_ limit: Int) -> [(JobRecord, JobLock)] {
            defer { job = nil }
            guard let job, limit > 0 else { job?.1.release(); return [] }
            return [job]
        }
    }

    /// The intake's hand-over of job `record`, claimed into `work/` with `lock` held: kept for
    /// the next claim while the worker has room for it (else let go: it waits in `work/`
    /// unlocked, as every queued job does), and the worker is woken.
    public func take(_ record: JobRecord, _ lock: JobLock) {
        let wake = handedOver.withLock { handed in
            if handed.wanted, handed.job == nil { handed.job = (record, lock) } else { lock.release() }
            return handed.wake
        }
        wake?()
    }
}
