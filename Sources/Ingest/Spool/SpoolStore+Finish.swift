import Foundation

/// How the spool records an attempt's end, under the job's lock: each event (log line, webhook)
/// is written before the upload is filed, so a crash between the two repeats the event on
/// restart (at least once) rather than losing it. The lock is kept when this throws, so that
/// the worker may try again (or abandon it).
extension SpoolStore {
    public func finish(_ job: ClaimedJob, _ end: JobEnd, output: AttemptOutput, target: any OutputTarget) async throws -> Bool {
        try await DeletionFence(layout: layout).shared { try await finishFenced(job, end, output: output, target: target) }
    }

    /// ``finish(_:_:output:target:)`` once no deletion can record its tombstone meanwhile.
    private func finishFenced(_ job: ClaimedJob, _ end: JobEnd, output: AttemptOutput, target: any OutputTarget) async throws -> Bool {
        guard var record = try holds(job) else { return false }
        let filed = filed(end, id: job.id)
        try? FileManager.default.removeItem(atPath: Self.playableRecord(layout, job.id))  // whatever the end, no longer growing
        switch filed {
        case .published(let result):
            try await publish(&record, result, output: output, target: target)
        case .rejected(let reason), .failed(let reason):
            events.append(filed.label, job.id, Self.logged(output, ["code": reason.code, "message": reason.message, "attempts": reason.attempts]))
            try output.webhook(filed, place: target.place(output)).map { try outbox?.record($0) }
            record.attempts = reason.attempts
            record.lastError = reason.message
            try spool.finish(record, as: filed.label == "rejected" ? .rejected : .failed, reason: reason)
        case .retried(let reason, let after):
            record.attempts = reason.attempts
            record.lastError = reason.message
            record.notBefore = Date().addingTimeInterval(after.seconds)
            events.append("retry", job.id, Self.logged(output, ["code": reason.code, "message": reason.message, "attempts": reason.attempts,
                                                                "delay": after.seconds]))
            try spool.update(record)
        case .released:
            events.append("interrupted", job.id, [:])
        }
        await abandon(job)
        return true
    }

    /// Puts the output in view and records where it plays (``PlaybackPlace``, as the target
    /// says) with its event and webhook, and the manifest for `status`; then files the folder.
    private func publish(_ record: inout JobRecord, _ result: JobResult, output: AttemptOutput, target: any OutputTarget) async throws {
        let place = try await target.publish(output)
        try await output.whilePublishing?()
        events.append("published", record.id, place.eventFields.merging(["duration": result.durationSeconds ?? 0]) { $1 })
        try output.webhook(.published(result), place: place).map { try outbox?.record($0) }
        record.place = place
        record.playback = output.playback
        try? output.manifest.write(to: URL(fileURLWithPath: "\(layout.job(record.id))/manifest.json"))
        try spool.update(record)
        try spool.finish(record, as: .archive)
    }

    /// An end event's `fields`, with the job process's last lines when it logged any.
    static func logged(_ output: AttemptOutput, _ fields: [String: any Sendable]) -> [String: any Sendable] {
        var fields = fields
        if let log = output.log { fields["log"] = log }
        return fields
    }

    /// `end` with its reason's message naming where the upload is filed, not `work/`.
    private func filed(_ end: JobEnd, id: String) -> JobEnd {
        func moved(_ reason: Reason, to state: SpoolLayout.State) -> Reason {
            var reason = reason
            reason.message = reason.message.replacingOccurrences(of: layout.job(id), with: layout.job(id, in: state))
            return reason
        }
        switch end {
        case .rejected(let reason): return .rejected(moved(reason, to: .rejected))
        case .failed(let reason): return .failed(moved(reason, to: .failed))
        default: return end
        }
    }
}
