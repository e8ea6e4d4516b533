import Foundation
import Logging
import Transcode

/// The completer's side of an attempt: its end recorded in the store, with its event and webhook.
extension JobWorker {
    /// Records the end, retrying while the store is unreachable: for at most the lease, and not
    /// after the renewal deadline passed (`lease` is set: the job may soon be someone else's) or
    /// the grace period is over (a shutdown is never held up by a store that does not answer).
    nonisolated func complete(_ end: JobEnd, of job: ClaimedJob, output: AttemptOutput, lease: StopFlag, seconds: Double, log: Logger) async {
        var end = end
        let deadline = ContinuousClock.now + configuration.lease
        var delay = Duration.milliseconds(200)
        while true {
            do {
                // Past the grace period the store gets a moment, not a lease: a shutdown is never
                // held up by a database that does not answer (the job's lease then runs out).
                let limit = stopFlag.value ? Duration.seconds(2) : configuration.lease
                let answer = try await withinDeadline(limit) { [store, end, target] in try await store.finish(job, end, output: output, target: target) }
                guard let recorded = answer else { throw StoreTimeout(seconds: limit.seconds) }
                await completed(end, of: job, recorded: recorded, output: output, seconds: seconds, log: log)
                return
            } catch {
                if (error as? StoreRefusal)?.isPermanent == true, end.label != "failed" {
                    // The store refuses these values for good: the job ends failed with the
                    // store's words rather than running until its attempts are spent.
                    log.error("the job store refuses to record the end; ending the job failed", metadata: ["end": "\(end.label)", "error": "\(error)"])
                    if case .published = end { await target.discard(output) }
                    end = .failed(Reason(code: "store_refused", message: "the job store refused to record \(end.label): \(error)", attempts: job.attempt))
                    continue
                }
                guard !stopFlag.value, !lease.value, ContinuousClock.now + delay < deadline else {
                    // The staging stays: a finish left running may still publish it; the job's
                    // next attempt removes it otherwise.
                    await store.abandon(job)
                    log.error("cannot record the job's end; its lease will expire and it will run again", metadata: ["error": "\(error)"])
                    return
                }
                log.warning("job store unreachable while recording; retrying", metadata: ["error": "\(error)"])
                do {
                    try await SteadyTimer.sleep(for: delay)
                } catch {
                    await store.abandon(job)
                    log.warning("stopped before the job's end was recorded; its lease will expire and it will run again")
                    return
                }
                delay = min(delay * 2, .seconds(5))
            }
        }
    }

    /// After the store answered: counts and logs the end, or, when the token no longer held
    /// (`recorded` is false), lets go of the job with nothing published or recorded.
    private nonisolated func completed(_ end: JobEnd, of job: ClaimedJob, recorded: Bool, output: AttemptOutput, seconds: Double,
                                       log: Logger) async {
        guard recorded else {
            await target.discard(output)
            await store.abandon(job)
            metrics.jobEnded(result: "lease_lost", seconds: seconds, realtimeFactor: nil)
            log.warning("fenced out before recording the end (its lease was lost, or the job was deleted): nothing published or recorded, staging removed")
            return
        }
        var speed: Double?
        if case .published(let result) = end {
            speed = result.speed
            await published()
        }
        metrics.jobEnded(result: end.label, seconds: seconds, realtimeFactor: speed)
        let metadata: Logger.Metadata = end.reason.map { ["code": "\($0.code)", "message": "\($0.message)"] } ?? ["output": "\(target.place(output).recorded)"]
        switch end {
        case .published, .released: log.info("\(end.label)", metadata: metadata)
        case .rejected, .retried: log.warning("\(end.label)", metadata: metadata)
        case .failed: log.error("failed", metadata: metadata)
        }
    }
}

/// A job store call that did not answer in time.
struct StoreTimeout: Error, CustomStringConvertible {
    var seconds: Double
    var description: String { "the job store did not answer within \(seconds) s" }
}
