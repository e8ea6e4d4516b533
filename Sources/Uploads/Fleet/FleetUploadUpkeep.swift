import Logging
import ServiceLifecycle

/// Every minute (and once at start), on every fleet `serve` host: uploads whose token expired
/// lose their multipart upload, tail objects and row (a finished one only its row); complete
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
        var expired: [String] = []
        for row in due.expired {
            if !row.enqueued {
                try? await store.s3.abortUpload(store.location(row.key), uploadID: row.multipartID)
                await store.deleteTails(row)
            }
            if try await store.rows.delete(row.id, part: row.part), !row.enqueued, !row.terminated { expired.append(row.id) }
        }
        for row in due.unqueued {
            do { try await store.finish(row) } catch { logger.warning("cannot queue a complete upload yet", metadata: ["id": "\(row.id)", "error": "\(error)"]) }
        }
        if !expired.isEmpty {
            metrics.expired(expired.count)
            logger.info("expired uploads removed", metadata: ["ids": "\(expired)"])
        }
    }
}
