import Foundation
import Logging
import Transcode

/// One attempt of a claimed job, start to end.
extension JobWorker {
    nonisolated func process(_ job: ClaimedJob) async {
        let log = logger.with(["id": "\(job.id)", "attempt": "\(job.attempt)"])
        let started = ContinuousClock.now
        let output = JobWorkerConfiguration.output(cdn: configuration.cdn, id: job.id, token: job.token)
        let lease = StopFlag()  // set once this attempt's lease is lost
        let recording = StopFlag()  // set once the store is asked to record the end
        // The lease is renewed until the end is recorded, not only while the job process runs.
        let heartbeat = Task { await keepLease(job, lost: lease, recording: recording, log: log) }
        log.info("job started", metadata: ["input": "\(job.input.description)"])
        // The scratch lives until the end is recorded: a bucket publish reads its manifest there.
        let (end, scratch) = await attempt(job, output: output, lease: lease, log: log)
        let seconds = (ContinuousClock.now - started).seconds
        // A job process that was stopped or killed cannot remove its staging; only this
        // attempt's own is removed (a newer attempt's may be beside it).
        if !configuration.remoteCDN { if case .published = end, !lease.value {} else { removeOwnStaging(job, output: output) } }
        if lease.value {
            await store.abandon(job)
            metrics.jobEnded(result: "lease_lost", seconds: seconds, realtimeFactor: nil)
            log.warning("lease lost: the job was given to another worker; nothing published, staging removed")
        } else {
            recording.set()
            await record(end, of: job, output: output, lease: lease, seconds: seconds, log: log)
        }
        withExtendedLifetime(scratch) {}
        heartbeat.cancel()
        await finished(job.id)
    }

    /// Runs the attempt (unless an earlier one already published, or the pre-check refuses the
    /// upload) and says how it ended.
    private nonisolated func attempt(_ job: ClaimedJob, output: String, lease: StopFlag, log: Logger) async -> (JobEnd, PrivateDirectory?) {
        let bucket: String? = configuration.remoteCDN ? output : nil
        let remoteInput: String? = if case .path(let text) = job.input, RemotePath.isRemote(text) { text } else { nil }
        let scratch: PrivateDirectory?
        do {
            let needed = job.directory == nil || job.preset != nil || bucket != nil || remoteInput != nil
            scratch = needed ? try PrivateDirectory(prefix: "ingestd-job-") : nil
        } catch {
            // The scratch file system (TMPDIR) gone or full: the host's fault, not the upload's.
            await hostFault("cannot make the job's scratch directory: \(error)")
            return (.released, nil)
        }
        return (await attempt(job, output: output, bucket: bucket, remoteInput: remoteInput, scratch: scratch, lease: lease, log: log), scratch)
    }

    private nonisolated func attempt(_ job: ClaimedJob, output: String, bucket: String?, remoteInput: String?,
                                     scratch: PrivateDirectory?, lease: StopFlag, log: Logger) async -> JobEnd {
        let directory = job.directory ?? scratch!.path
        if bucket == nil {
            removeStaging(of: job.id, before: job.token)
            if FileManager.default.fileExists(atPath: "\(output)/manifest.json") {
                // Published by an earlier attempt whose worker died before recording it.
                return .published(JSONFile.read(JobResult.self, from: "\(directory)/result.json") ?? JobResult(ok: true))
            }
        }
        var runner = configuration.runner
        var limits = configuration.preset.limits
        if let json = job.preset, let scratch {
            let path = "\(scratch.path)/preset.json"
            do {
                limits = try Preset.decode(Data(json.utf8), source: "job \(job.id)").limits
                try Data(json.utf8).write(to: URL(fileURLWithPath: path))
            } catch {
                return .rejected(Reason(code: "bad_preset", message: "\(error)", attempts: job.attempt))
            }
            runner.presetArgument = path
        }
        var input = job.input
        if remoteInput == nil, configuration.bucketInputsOnly {
            // Not the upload's fault: a host with the volume can run it.
            await hostFault("\(job.input.description): a local input, and this worker has no uploads root (--uploads): it takes s3:// inputs only")
            return .released
        }
        if let remoteInput {
            // Only from under the bucket's uploads root: a row cannot point the worker at any
            // object its credentials can read.
            guard let root = configuration.bucketUploads else {
                await hostFault("\(remoteInput): an s3:// input, and this worker has no bucket uploads root (--uploads s3://bucket/prefix)")
                return .released
            }
            if let refusal = root.refusal(for: remoteInput) {
                return .rejected(Reason(code: refusal.code, message: refusal.message, attempts: job.attempt))
            }
            switch await fetch(remoteInput, into: directory, limits: limits, attempt: job.attempt) {
            case .success(let path): input = .path(path)
            case .failure(let early): return early.end
            }
        }
        if let refusal = (remoteInput == nil ? configuration.uploads?.refusal(for: input) : nil) ?? UploadPrecheck.check(input, limits: limits) {
            if refusal.code == "missing" {
                // A missing input on a host that cannot see its uploads is the host's fault, not the upload's.
                if let problem = configuration.uploads?.problem() {
                    await hostFault(problem)
                    return .released
                }
                // The root checks out, yet the file may be missing from this host's view alone:
                // charged to the upload only once the store confirms it (another host, or time).
                do {
                    switch try await store.inputMissing(job, host: HostName.current) {
                    case .confirmed(let note):
                        await missingInput(confirmed: true)
                        return .rejected(Reason(code: refusal.code, message: note.map { "\(refusal.message) (\($0))" } ?? refusal.message, attempts: job.attempt))
                    case .unconfirmed:
                        log.warning("input missing on this host only so far: released for another host to confirm", metadata: ["input": "\(job.input.description)"])
                        await missingInput(confirmed: false)
                        return .released
                    }
                } catch {
                    log.warning("input missing; the store could not record it, the job goes back", metadata: ["error": "\(error)"])
                    return .released
                }
            }
            return .rejected(Reason(code: refusal.code, message: refusal.message, attempts: job.attempt))
        }
        let progress = Task { await reportProgress(job, path: "\(directory)/progress.json") }
        defer { progress.cancel() }
        let stop = stopFlag
        let outcome = await runner.run(input: input, output: bucket == nil ? output : "\(directory)/out", jobDirectory: directory,
                                       stageOnly: true, attempt: job.token) { stop.value || lease.value }
        switch outcome {
        case .published(let result):
            if bucket != nil, result.staging == nil {
                return configuration.retry.end(attempt: job.attempt, Reason(code: "internal", message: "the job process left no output to upload", attempts: job.attempt))
            }
            if let bucket, let staging = result.staging {
                // Uploaded under this attempt's own prefix while it holds the lease; nothing names
                // the prefix until the store records the end (the sweeper takes it otherwise).
                guard let storage = configuration.storage else { return .released }
                do {
                    // A lost lease stops the upload: nothing more is sent for an attempt that can
                    // never be named.
                    let sent = try await storage.upload(staging, to: bucket) { !stop.value && !lease.value }
                    log.info("uploaded", metadata: ["to": "\(bucket)", "objects": "\(sent.objects)", "bytes": "\(sent.bytes)"])
                } catch {
                    if !stop.value, !lease.value { await hostFault("object storage: \(error)") }
                    return .released
                }
            }
            return .published(result)
        case .rejected(let code, let message): return .rejected(Reason(code: code, message: message, attempts: job.attempt))
        case .retryable(let code, let message):
            // A full disk or a CDN root gone is the host's fault: the job goes back uncharged.
            if code == "no_space" {
                await hostFault(message, outOfSpace: true)
                return .released
            }
            if let problem = HostHealth(cdn: configuration.localRoot, minFree: .bytes(0), uploads: configuration.uploads).check().problem {
                await hostFault(problem)
                return .released
            }
            return configuration.retry.end(attempt: job.attempt, Reason(code: code, message: message, attempts: job.attempt))
        case .interrupted: return .released
        }
    }

    /// Records the end, retrying while the store is unreachable: for at most the lease, and not
    /// after the renewal deadline passed (`lease` is set: the job may soon be someone else's) or
    /// the grace period is over (a shutdown is never held up by a store that does not answer).
    private nonisolated func record(_ end: JobEnd, of job: ClaimedJob, output: String, lease: StopFlag, seconds: Double, log: Logger) async {
        var end = end
        let deadline = ContinuousClock.now + configuration.lease
        var delay = Duration.milliseconds(200)
        let staging: String? = if case .published(let result) = end { result.staging } else { nil }
        let isBucket = configuration.remoteCDN
        let webhook: @Sendable (JobEnd) -> OutboxEvent?
        if configuration.webhooks {
            webhook = webhookEvent(job, output: output, staging: staging)
        } else {
            webhook = { _ in nil }
        }
        while true {
            do {
                // Past the grace period the store gets a moment, not a lease: a shutdown is never
                // held up by a database that does not answer (the job's lease then runs out).
                let limit = stopFlag.value ? Duration.seconds(2) : configuration.lease
                let answer = try await withinDeadline(limit) { [store, end] in
                    try await store.finish(job, end, webhook: webhook) {
                        // Already in place (an earlier attempt's rename), or uploaded to a bucket: the
                        // store's record of the end is then what publishes it.
                        guard let staging, !isBucket else { return }
                        let staged = StagedDirectory(destination: output, staging: staging)
                        if FileManager.default.fileExists(atPath: "\(output)/manifest.json") {
                            staged.discard()
                        } else {
                            try staged.publish(synced: true)  // the job process flushed it
                        }
                    }
                }
                guard let recorded = answer else { throw StoreTimeout(seconds: limit.seconds) }
                guard recorded else {
                    if let staging { try? FileManager.default.removeItem(atPath: staging) }
                    await store.abandon(job)
                    metrics.jobEnded(result: "lease_lost", seconds: seconds, realtimeFactor: nil)
                    log.warning("lease lost before recording the end: nothing published or recorded, staging removed")
                    return
                }
                var speed: Double?
                if case .published(let result) = end {
                    speed = result.speed
                    await published()
                }
                metrics.jobEnded(result: end.label, seconds: seconds, realtimeFactor: speed)
                let metadata: Logger.Metadata = end.reason.map { ["code": "\($0.code)", "message": "\($0.message)"] } ?? ["output": "\(output)"]
                switch end {
                case .published, .released: log.info("\(end.label)", metadata: metadata)
                case .rejected, .retried: log.warning("\(end.label)", metadata: metadata)
                case .failed: log.error("failed", metadata: metadata)
                }
                return
            } catch {
                if (error as? StoreRefusal)?.isPermanent == true, end.label != "failed" {
                    // The store refuses these values for good: the job ends failed with the
                    // store's words rather than running until its attempts are spent.
                    log.error("the job store refuses to record the end; ending the job failed", metadata: ["end": "\(end.label)", "error": "\(error)"])
                    if case .published(let result) = end, let staging = result.staging { try? FileManager.default.removeItem(atPath: staging) }
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

    /// The webhook of an end as the store records it (its reason's message may name where the
    /// store files the upload): `upload.published`, `upload.rejected` or `upload.failed`.
    private nonisolated func webhookEvent(_ job: ClaimedJob, output: String, staging: String?) -> @Sendable (JobEnd) -> OutboxEvent? {
        { [clock = configuration.clock] end in
            switch end {
            case .published:
                let manifest = FileManager.default.contents(atPath: "\(output)/manifest.json")
                    ?? staging.flatMap { FileManager.default.contents(atPath: "\($0)/manifest.json") }
                return UploadEvent.published(job: job.id, manifest: manifest, at: clock.now())
            case .rejected(let reason), .failed(let reason):
                return UploadEvent.refused("upload.\(end.label)", job: job.id, uploadID: Upload.declaredID(of: job.input),
                                           code: reason.code, message: reason.message, attempts: reason.attempts, at: clock.now())
            case .retried, .released:
                return nil
            }
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

    private nonisolated func reportProgress(_ job: ClaimedJob, path: String) async {
        while !Task.isCancelled {
            try? await SteadyTimer.sleep(for: .seconds(2))
            if let progress = JSONFile.read(JobProgress.self, from: path) { await store.progress(job, progress) }
        }
    }

    /// Fetches an `s3://` input into the job's scratch and returns its local path, or how the
    /// attempt ends: a bad upload (over a limit, not a plain upload directory, gone) is rejected;
    /// storage that cannot be reached, a local failure (scratch full) or a stop is the host's
    /// fault, and the job goes back uncharged; a refusal of this one object (403 on it, an
    /// archived object) is charged as a failed attempt, so such a job ends.
    private nonisolated func fetch(_ location: String, into directory: String, limits: Preset.Limits,
                                   attempt: Int) async -> Result<String, EndedEarly> {
        guard let storage = configuration.storage else {
            await hostFault("\(location): no object storage configured on this host (AWS_ACCESS_KEY_ID, --s3-endpoint)")
            return .failure(EndedEarly(end: .released))
        }
        do {
            return .success(try await storage.fetch(location, into: directory, limits: limits))
        } catch let error as TranscodeError {
            return .failure(EndedEarly(end: .rejected(Reason(code: error.code, message: "\(error)", attempts: attempt))))
        } catch let error as IngestError where error.code == "input_missing" || error.code == "bad_upload" {
            return .failure(EndedEarly(end: .rejected(Reason(code: error.code, message: "\(error)", attempts: attempt))))
        } catch where storage.refusesObject(error) {
            return .failure(EndedEarly(end: configuration.retry.end(attempt: attempt, Reason(code: "storage_refused", message: "\(error)", attempts: attempt))))
        } catch {
            await hostFault("fetching \(location): \(error)")
            return .failure(EndedEarly(end: .released))
        }
    }

    struct EndedEarly: Error {
        var end: JobEnd
    }

    /// Staging directories of earlier attempts of this job (their owners lost the job, or were
    /// killed; a newer attempt cannot exist while this one holds the job).
    private nonisolated func removeStaging(of id: String, before token: Int64) {
        let prefix = StagedDirectory.stagingPrefix(of: id)
        for name in (try? FileManager.default.contentsOfDirectory(atPath: configuration.cdn)) ?? [] where name.hasPrefix(prefix) {
            let suffix = name.dropFirst(prefix.count)
            if let attempt = suffix.hasPrefix("t") ? Int64(suffix.dropFirst()) : nil, attempt >= token { continue }
            try? FileManager.default.removeItem(atPath: "\(configuration.cdn)/\(name)")
        }
    }

    /// This attempt's staging, if its job process left one.
    private nonisolated func removeOwnStaging(_ job: ClaimedJob, output: String) {
        try? FileManager.default.removeItem(atPath: "\(configuration.cdn)/\(StagedDirectory.stagingPrefix(of: job.id))t\(job.token)")
    }
}

/// A job store call that did not answer in time.
struct StoreTimeout: Error, CustomStringConvertible {
    var seconds: Double
    var description: String { "the job store did not answer within \(seconds) s" }
}
