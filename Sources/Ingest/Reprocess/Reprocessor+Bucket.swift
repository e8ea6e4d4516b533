import Foundation

extension Reprocessor {
    /// Reprocesses one video into a bucket. Its pointer is read first (a video now published with
    /// this preset is skipped); the video is encoded into private scratch, uploaded under a new
    /// version prefix, and the pointer switched to it only if it is still the one read
    /// (`If-Match` its ETag; `If-None-Match: *` when there was none). A pointer changed meanwhile
    /// is never overwritten: it is read again, and the video counts as skipped if it now names
    /// this preset, as failed (`pointer_moved`, for the next run) otherwise.
    func process(_ initial: ReprocessItem, cdn: String, storage: any RemoteStorage, stop: StopFlag) async -> ReprocessItem {
        var item = initial
        let started = ContinuousClock.now
        let output = "\(cdn)/\(item.id)"
        do {
            let current = try await storage.pointer(of: output)
            if current?.presetHash == preset.contentHash {
                (item.result, item.why) = (.skipped, "already published with preset \(preset.contentHash)")
                return item
            }
            let scratch = try PrivateDirectory(prefix: "ingestd-reprocess-")
            switch await runner.run(input: item.input, output: "\(scratch.path)/out", jobDirectory: scratch.path, stop: { stop.value }) {
            case .published:
                do {
                    item.version = try await storage.publish("\(scratch.path)/out", to: output, replacing: current)
                    item.result = .published
                } catch let moved as PointerMoved {
                    let now = try await storage.pointer(of: output)
                    if let now, now.presetHash == preset.contentHash {
                        (item.result, item.why, item.version) = (.skipped, "published with preset \(preset.contentHash) by another writer meanwhile", now.version)
                    } else {
                        (item.result, item.error) = (.failed, "pointer_moved: \(moved)\(now.map { " (it names \($0.version))" } ?? "")")
                    }
                }
            case .rejected(let code, let message), .retryable(let code, let message):
                (item.result, item.error) = (.failed, "\(code): \(message)")
            case .interrupted:
                item.result = .interrupted
                return item
            }
        } catch {
            (item.result, item.error) = (.failed, "\(error)")
        }
        item.seconds = (ContinuousClock.now - started).seconds
        return item
    }
}
