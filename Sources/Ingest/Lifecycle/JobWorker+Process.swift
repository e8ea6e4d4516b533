import Foundation
import Logging
import Transcode

/// One attempt of a claimed job, start to end, in River's three steps: the input is made ready
/// (``prepare(_:output:scratch:log:)``), the job process runs (``run(_:_:output:lease:log:)``),
/// and the end is recorded (``complete(_:of:output:lease:seconds:log:)``). The lease is
/// renewed throughout, until the end is recorded.
extension JobWorker {
    nonisolated func process(_ job: ClaimedJob) async {
        let log = logger.with(["id": "\(job.id)", "attempt": "\(job.attempt)"])
        let started = ContinuousClock.now
        var output = AttemptOutput(id: job.id, token: job.token)
        output.webhookClock = configuration.webhooks ? configuration.clock : nil
        output.uploadID = job.uploadID ?? (Self.remoteInput(of: job) == nil ? Upload.declaredID(of: job.input) : nil)  // s3://: once fetched
        let lease = StopFlag()  // set once this attempt's lease is lost
        let recording = StopFlag()  // set once the store is asked to record the end
        let heartbeat = Task { await keepLease(job, lost: lease, recording: recording, log: log) }
        log.info("job started", metadata: ["input": "\(job.input.description)"])
        // The scratch lives until the end is recorded: a bucket publish reads its manifest there.
        let (end, scratch) = await attempt(job, output: &output, lease: lease, log: log)
        let seconds = (ContinuousClock.now - started).seconds
        if case .published = end, !lease.value {} else {
            await target.discardLeftovers(id: job.id, token: job.token)
        }
        if lease.value {
            await store.abandon(job)
            metrics.jobEnded(result: "lease_lost", seconds: seconds, realtimeFactor: nil)
            log.warning("lease lost: the job was given to another worker; nothing published, staging removed")
        } else {
            recording.set()
            await complete(end, of: job, output: output, lease: lease, seconds: seconds, log: log)
        }
        withExtendedLifetime(scratch) {}
        heartbeat.cancel()
        await finished(job.id)
    }

    /// Makes the attempt's scratch, prepares its input and runs it; says how it ended.
    private nonisolated func attempt(_ job: ClaimedJob, output: inout AttemptOutput, lease: StopFlag,
                                     log: Logger) async -> (JobEnd, PrivateDirectory?) {
        let scratch: PrivateDirectory?
        do {
            let needed = job.directory == nil || job.preset != nil || target.writesInScratch || Self.remoteInput(of: job) != nil
            scratch = needed ? try PrivateDirectory(prefix: "ingestd-job-") : nil
        } catch {
            // The scratch file system (TMPDIR) gone or full: the host's fault, not the upload's.
            await hostFault("cannot make the job's scratch directory: \(error)")
            return (.released, nil)
        }
        switch await prepare(job, output: &output, scratch: scratch, log: log) {
        case .success(let prepared): return (await run(job, prepared, output: &output, lease: lease, log: log), scratch)
        case .failure(let early): return (early.end, scratch)
        }
    }

    /// Renews the lease every third of it. A renewal refused means the job was given away; no
    /// renewal for half a lease (the renewal deadline: the store is unreachable) means it may
    /// be soon: either way the job process is stopped (`lost` is set) and its staging removed,
    /// before anyone else can hold the job. Once the end is being recorded a refusal says
    /// nothing (the store may have recorded it already): the store's own fence decides.
    private nonisolated func keepLease(_ job: ClaimedJob, lost: StopFlag, recording: StopFlag, log: Logger) async {
        var lastRenewal = ContinuousClock.now
        var every = configuration.lease / 3
        while !Task.isCancelled {
            try? await SteadyTimer.sleep(for: every)
            if Task.isCancelled { return }
            do {
                if try await store.renew(job) {
                    lastRenewal = .now
                    every = configuration.lease / 3
                    metrics.storeReachable()
                } else if recording.value {
                    return
                } else {
                    lost.set()
                    metrics.leasesLost(1)
                    log.warning("lease lost (the job belongs to another attempt now): stopping the job process")
                    return
                }
            } catch {
                metrics.storeUnreachable("\(error)")
                if ContinuousClock.now - lastRenewal >= configuration.lease / 2 {
                    lost.set()
                    log.warning("lease not renewed for half a lease: stopping the job process, its work is abandoned",
                                metadata: ["error": "\(error)"])
                    return
                }
                every = min(configuration.lease / 3, .seconds(1))  // try again soon
            }
        }
    }
}
