import Logging

extension FleetUploadStore {
    /// On every fleet `serve` host: uploads whose token expired lose their multipart upload, tail
    /// objects, object and row (a finished one only its row; a set's files each theirs); complete
    /// uploads not yet queued (their host died between the last byte and the job) are queued.
    func upkeep() async throws -> [String] {
        let due = try await rows.due()
        var expired: Set<String> = []
        for var row in due.expired {
            // Every byte acknowledged: the client was told it is done, so it becomes a job after
            // all (its completion kept failing until its token ran out), never discarded.
            if !row.enqueued, !row.terminated, row.offset == row.length, (try? await finish(row)) == true { row.enqueued = true }
            // Not a job: its bytes go, the object too unless a job names it after all (a host
            // killed between queueing and recording it) and was not deleted.
            if !row.enqueued { await discard(row, object: try await jobs.job(row.id).map { $0.state == .deleted } ?? true) }
            if try await rows.delete(row.id, part: row.part), !row.enqueued, !row.terminated { expired.insert(row.id) }
        }
        for row in due.unqueued {
            do { try await finish(row) } catch { logger.warning("cannot queue a complete upload yet", metadata: ["id": "\(row.id)", "error": "\(error)"]) }
        }
        return expired.sorted()
    }
}
