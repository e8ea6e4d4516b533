import Logging
import ServiceLifecycle

/// Removes expired uploads every minute (and once at start), until shutdown.
struct UploadSweeper: Service {
    let directory: UploadDirectory
    let metrics: UploadMetrics
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                let expired = directory.sweep()
                if !expired.isEmpty {
                    metrics.expired(expired.count)
                    logger.info("expired uploads removed", metadata: ["ids": "\(expired)"])
                }
                try? await Task.sleep(for: .seconds(60))
            }
        }
    }
}
