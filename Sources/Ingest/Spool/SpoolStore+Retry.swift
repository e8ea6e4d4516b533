import Foundation

extension SpoolStore {
    /// Moves each job back from `failed/` (or `rejected/`) into `work/`, where the daemon claims
    /// it: under the job's lock (so the daemon cannot claim it half-reset), its record's attempts
    /// and backoff reset and its `reason.json` removed, then the lock released. A job another
    /// retry holds, or no longer in those folders, is skipped.
    public func retry(_ ids: [String], rejected: Bool) async throws -> [String] {
        var retried: [String] = []
        for id in Set(ids).sorted() where UploadManifest.isValidID(id) && !layout.isDeleted(id) {
            for state in rejected ? [SpoolLayout.State.failed, .rejected] : [.failed] {
                guard FileManager.default.fileExists(atPath: layout.job(id, in: state)),
                      let lock = JobLock(directory: layout.job(id, in: state)) else { continue }
                defer { lock.release() }
                guard rename(layout.job(id, in: state), layout.job(id)) == 0 else { continue }
                var record = try JSONFile.load(JobRecord.self, from: "\(layout.job(id))/job.json")
                record.attempts = 0
                record.notBefore = nil
                record.lastError = nil
                try spool.update(record)
                try? FileManager.default.removeItem(atPath: "\(layout.job(id))/reason.json")
                try Durability.syncDirectory(layout.directory(state))
                try Durability.syncDirectory(layout.directory(.work))
                events.append("retried", id, ["from": state == .failed ? "failed" : "rejected"])
                retried.append(id)
                break
            }
        }
        return retried
    }
}
