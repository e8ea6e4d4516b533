import Foundation
import Logging
import Transcode

/// The attempt's job process, and what its outcome means for the job.
extension JobWorker {
    /// Runs the job process (stopped when the grace period is over or the lease is lost) into
    /// the target's directory; what the target must send (a bucket's version) is then sent.
    /// The output learns where the job process staged.
    nonisolated func run(_ job: ClaimedJob, _ prepared: PreparedAttempt, output: inout AttemptOutput, lease: StopFlag,
                         log: Logger) async -> JobEnd {
        let progress = Task { await reportProgress(job, directory: prepared.directory) }
        defer { progress.cancel() }
        let stop = stopFlag
        let writeTo = target.writeDirectory(output, scratch: prepared.directory)
        // A bucket's growing version is mirrored while the job process writes it.
        let mirror = target.mirror(output, from: writeTo) { !stop.value && !lease.value }
        let mirroring = mirror.map { mirror in
            Task {
                while !Task.isCancelled {
                    try? await mirror.sync(master: false)  // the next round, or the end's upload, sends what failed
                    try? await SteadyTimer.sleep(for: .milliseconds(200))
                }
            }
        }
        let tail = JobLogTail()
        let show = target.growsInView ? GrowingShow.Show(store: store, job: job, output: output, target: target, mirror: mirror, log: log) : nil
        let outcome = await prepared.runner.run(input: prepared.input, output: writeTo, jobDirectory: prepared.directory,
                                                stageOnly: true, attempt: job.token, growing: show != nil,
                                                watcher: GrowingShow(margins: margins, show: show), logTail: tail) {
            stop.value || lease.value
        }
        output.log = tail.text()
        mirroring?.cancel()
        await mirroring?.value  // its last round ends before the end's upload begins
        switch outcome {
        case .published(let result):
            target.staged(&output, at: result.staging)
            if let early = await deliver(job, output: output, mirror: mirror, lease: lease, log: log) { return early }
            return .published(result)
        case .rejected(let code, let message): return .rejected(Reason(code: code, message: message, attempts: job.attempt))
        case .retryable(let code, let message): return await retryable(job, code: code, message: message)
        case .interrupted: return .released
        }
    }

    /// Sends what the target must send (a bucket's version, uploaded under this attempt's own
    /// prefix) while it holds the lease; nothing names it until the store records the end (the
    /// sweeper takes it otherwise). Nil once sent, or when nothing is to be sent; otherwise how
    /// the attempt ends.
    private nonisolated func deliver(_ job: ClaimedJob, output: AttemptOutput, mirror: (any RemoteMirror)?, lease: StopFlag,
                                     log: Logger) async -> JobEnd? {
        guard output.staging != nil else {
            return configuration.retry.end(attempt: job.attempt, Reason(code: "internal", message: "the job process left no output", attempts: job.attempt))
        }
        let stop = stopFlag
        do {
            // A lost lease stops the upload: nothing more is sent for an attempt that can never be named.
            if let sent = try await target.deliver(output, mirror: mirror, while: { !stop.value && !lease.value }) {
                log.info("uploaded", metadata: ["to": "\(target.place(output).recorded)", "objects": "\(sent.objects)", "bytes": "\(sent.bytes)"])
            }
            return nil
        } catch {
            if !stop.value, !lease.value { await hostFault("object storage: \(error)") }
            return .released
        }
    }

    /// A failure that another attempt may not repeat: charged (retried, or failed once the
    /// attempts are spent), unless it is the host's fault (a full disk, a CDN root gone), when
    /// the job goes back uncharged.
    private nonisolated func retryable(_ job: ClaimedJob, code: String, message: String) async -> JobEnd {
        if code == "no_space" {
            await hostFault(message, outOfSpace: true)
            return .released
        }
        if let problem = HostHealth(cdn: target.hostDirectory, minFree: .bytes(0), uploads: configuration.uploads).check().problem {
            await hostFault(problem)
            return .released
        }
        return configuration.retry.end(attempt: job.attempt, Reason(code: code, message: message, attempts: job.attempt))
    }

    /// Every 2 s, the job process's progress, with its shown video's running report (``Margin``):
    /// a video shown before the job's first progress report has its listing reported all the same.
    private nonisolated func reportProgress(_ job: ClaimedJob, directory: String) async {
        while !Task.isCancelled {
            try? await SteadyTimer.sleep(for: .seconds(2))
            let listing = JSONFile.read(JobPlayable.self, from: "\(directory)/playable.json")?.listing
            guard var progress = JSONFile.read(JobProgress.self, from: "\(directory)/progress.json")
                ?? listing.map({ _ in JobProgress(fraction: 0, outputSeconds: 0, speed: 0, etaSeconds: nil, updatedAt: Date()) })
            else { continue }
            progress.listing = listing
            await store.progress(job, progress)
        }
    }
}
