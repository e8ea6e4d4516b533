import Ingest
import Logging
import ServiceLifecycle

/// Every minute (and once at start), until shutdown, whatever the store: uploads whose token
/// expired are removed, and complete ones not yet handed on as a job (a crash came between) are
/// handed on (``UploadStore/upkeep()``).
struct UploadUpkeep: Service {
    let store: any UploadStore
    let metrics: UploadMetrics
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    let expired = try await store.upkeep()
                    if !expired.isEmpty {
                        metrics.expired(expired.count)
                        logger.info("expired uploads removed", metadata: ["ids": "\(expired)"])
                    }
                } catch {
                    logger.warning("upload upkeep failed; next try in a minute", metadata: ["error": "\(error)"])
                }
                try? await SteadyTimer.sleep(for: .seconds(60))
            }
        }
    }
}
