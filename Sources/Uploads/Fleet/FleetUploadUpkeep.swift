import Logging
import ServiceLifecycle

/// Every minute (and once at start), on every fleet `serve` host: uploads whose token expired
/// lose their multipart upload, tail objects, object and row (a finished one only its row; a
/// set's files each theirs); complete
/// uploads not yet queued (their host died between the last byte and the job) are queued.
struct FleetUploadUpkeep: Service {
    let store: FleetUploadStore
    let metrics: UploadMetrics
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do { try await sweep() } catch {
                    logger.warning("upload upkeep failed; next try in a minute", metadata: ["error": "\(error)"])
                }
                try? await Task.sleep(for: .seconds(60))
            }
        }
    }

    func sweep() async throws {
        let due = try await store.rows.due()
        var expired: Set<String> = []
        for var row in due.expired {
            // Every byte acknowledged: the client was told it is done, so it becomes a job after
            // all (its completion kept failing until its token ran out), never discarded.
            if !row.enqueued, !row.terminated, row.offset == row.length, (try? await store.finish(row)) == true { row.enqueued = true }
            // Not a job: its bytes go, the object too unless a job names it after all (a host
            // killed between queueing and recording it).
            if !row.enqueued { await store.discard(row, object: try await store.rows.job(row.id) == nil) }
            if try await store.rows.delete(row.id, part: row.part), !row.enqueued, !row.terminated { expired.insert(row.id) }
        }
        for row in due.unqueued {
            do { try await store.finish(row) } catch { logger.warning("cannot queue a complete upload yet", metadata: ["id": "\(row.id)", "error": "\(error)"]) }
        }
        if !expired.isEmpty {
            metrics.expired(expired.count)
            logger.info("expired uploads removed", metadata: ["ids": "\(expired.sorted())"])
        }
    }
}
