import Foundation
import Logging
import ServiceLifecycle

/// Every minute (and once at start), until shutdown: removes expired uploads, and enqueues any
/// whose files are all complete but were not yet handed to the spool (a crash came between).
struct UploadSweeper: Service {
    let directory: UploadDirectory
    let metrics: UploadMetrics
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                let expired = directory.sweep()
                for id in (try? FileManager.default.contentsOfDirectory(atPath: directory.root)) ?? [] {
                    _ = try? directory.enqueueIfComplete(id)
                }
                if !expired.isEmpty {
                    metrics.expired(expired.count)
                    logger.info("expired uploads removed", metadata: ["ids": "\(expired)"])
                }
                try? await Task.sleep(for: .seconds(60))
            }
        }
    }
}
