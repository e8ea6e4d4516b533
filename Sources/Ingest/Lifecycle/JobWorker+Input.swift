import Foundation
import Logging
import Transcode

/// An attempt whose input is ready to run: the upload (fetched to the scratch when it was in
/// a bucket), the job process's runner with the job's preset, and where it leaves its files.
struct PreparedAttempt: Sendable {
    var input: TranscodeJob.Input
    var runner: JobRunner
    /// The job's own files (result, progress): the spool's `work/<id>/` or the scratch.
    var directory: String
}

/// How an attempt ended before its job process ran.
struct EndedEarly: Error {
    var end: JobEnd
}

/// The executor's side of an attempt: the input fetched and checked before anything runs.
extension JobWorker {
    /// Prepares the attempt, or says how it ends without running: published already by an
    /// earlier attempt, a refused upload (rejected), or a host fault (released uncharged).
    nonisolated func prepare(_ job: ClaimedJob, output: inout AttemptOutput, scratch: PrivateDirectory?,
                             log: Logger) async -> Result<PreparedAttempt, EndedEarly> {
        let directory = job.directory ?? scratch!.path
        if target.prepare(output) {
            // Published by an earlier attempt whose worker died before recording it: adopted.
            target.staged(&output, at: nil)
            return .failure(EndedEarly(end: .published(JSONFile.read(JobResult.self, from: "\(directory)/result.json") ?? JobResult(ok: true))))
        }
        var runner = configuration.runner
        var limits = configuration.preset.limits
        if let json = job.preset, let scratch {
            do {
                limits = try Preset.decode(Data(json.utf8), source: "job \(job.id)").limits
                runner.presetArgument = "\(scratch.path)/preset.json"
                try Data(json.utf8).write(to: URL(fileURLWithPath: runner.presetArgument))
            } catch {
                return .failure(EndedEarly(end: .rejected(Reason(code: "bad_preset", message: "\(error)", attempts: job.attempt))))
            }
        }
        let input: TranscodeJob.Input
        switch await localInput(of: job, into: directory, limits: limits) {
        case .success(let ready): input = ready
        case .failure(let early): return .failure(early)
        }
        if Self.remoteInput(of: job) != nil { output.uploadID = output.uploadID ?? Upload.declaredID(of: input) }
        output.playback = PlaybackPolicy.strictest(configuration.playback, job.playback, Upload.declaredPlayback(of: input))
        if output.playback == .signed {
            // Before the job process writes anything a player could fetch.
            do {
                try await target.markPlayback(of: job.id, .signed)
            } catch {
                await hostFault("cannot mark \(job.id) signed on the CDN: \(error)")
                return .failure(EndedEarly(end: .released))
            }
        }
        runner.playback = output.playback
        if let early = await precheck(job, input: input, limits: limits, log: log) { return .failure(early) }
        return .success(PreparedAttempt(input: input, runner: runner, directory: directory))
    }

    /// The job's input as a local path: a local one as it is (unless this worker takes `s3://`
    /// inputs only), an `s3://` one fetched into `directory` from under the bucket uploads root.
    private nonisolated func localInput(of job: ClaimedJob, into directory: String,
                                   limits: Preset.Limits) async -> Result<TranscodeJob.Input, EndedEarly> {
        guard let remote = Self.remoteInput(of: job) else {
            guard !configuration.bucketInputsOnly else {
                // Not the upload's fault: a host with the volume can run it.
                await hostFault("\(job.input.description): a local input, and this worker has no uploads root (--uploads): it takes s3:// inputs only")
                return .failure(EndedEarly(end: .released))
            }
            return .success(job.input)
        }
        // Only from under the bucket's uploads root: a row cannot point the worker at any
        // object its credentials can read.
        guard let root = configuration.bucketUploads else {
            await hostFault("\(remote): an s3:// input, and this worker has no bucket uploads root (--uploads s3://bucket/prefix)")
            return .failure(EndedEarly(end: .released))
        }
        if let refusal = root.refusal(for: remote) {
            return .failure(EndedEarly(end: .rejected(Reason(code: refusal.code, message: refusal.message, attempts: job.attempt))))
        }
        return await fetch(remote, into: directory, limits: limits, attempt: job.attempt).map { .path($0) }
    }

    /// The pre-check of the upload against the limits (and, for a local input, the uploads
    /// root): nil when it may run.
    private nonisolated func precheck(_ job: ClaimedJob, input: TranscodeJob.Input, limits: Preset.Limits, log: Logger) async -> EndedEarly? {
        let local = Self.remoteInput(of: job) == nil
        guard let refusal = (local ? configuration.uploads?.refusal(for: input) : nil) ?? UploadPrecheck.check(input, limits: limits) else {
            return nil
        }
        guard refusal.code == "missing" else {
            return EndedEarly(end: .rejected(Reason(code: refusal.code, message: refusal.message, attempts: job.attempt)))
        }
        return await missing(job, refusal: refusal, log: log)
    }

    /// A missing input: the host's fault when it cannot see its uploads; otherwise charged to
    /// the upload only once the store confirms it (another host, or time), since the file may
    /// be missing from this host's view alone.
    private nonisolated func missing(_ job: ClaimedJob, refusal: UploadPrecheck.Refusal, log: Logger) async -> EndedEarly {
        if let problem = configuration.uploads?.problem() {
            await hostFault(problem)
            return EndedEarly(end: .released)
        }
        do {
            switch try await store.inputMissing(job, host: HostName.current) {
            case .confirmed(let note):
                await missingInput(confirmed: true)
                let message = note.map { "\(refusal.message) (\($0))" } ?? refusal.message
                return EndedEarly(end: .rejected(Reason(code: refusal.code, message: message, attempts: job.attempt)))
            case .unconfirmed:
                log.warning("input missing on this host only so far: released for another host to confirm", metadata: ["input": "\(job.input.description)"])
                await missingInput(confirmed: false)
                return EndedEarly(end: .released)
            }
        } catch {
            log.warning("input missing; the store could not record it, the job goes back", metadata: ["error": "\(error)"])
            return EndedEarly(end: .released)
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

    /// The job's input when it is an `s3://` object.
    static func remoteInput(of job: ClaimedJob) -> String? {
        if case .path(let text) = job.input, RemotePath.isRemote(text) { text } else { nil }
    }
}
