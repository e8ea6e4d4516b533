import Foundation

/// Reprocess in a bucket: the video is encoded into private scratch, uploaded under a new
/// version prefix, and the pointer switched to it only if it is still the one read (`If-Match`
/// its ETag; `If-None-Match: *` when there was none). A pointer changed meanwhile is never
/// overwritten: it is read again, and the video counts as skipped if it now names this preset,
/// as failed (`pointer_moved`, for the next run) otherwise.
extension HeldBucketTarget {
    public func publishedPreset(of id: String) async throws -> String? { try await storage.pointer(of: prefix(id))?.presetHash }

    public func republish(_ id: String, presetHash: String, encode: VersionEncoder) async -> Republished {
        let output = prefix(id)
        do {
            let current = try await storage.pointer(of: output)
            if let current, current.presetHash == presetHash {
                return .skipped(why: "already published with preset \(presetHash)", version: current.version)
            }
            let scratch = try PrivateDirectory(prefix: "ingestd-reprocess-")
            switch await encode("\(scratch.path)/out", nil, nil) {
            case .published:
                do {
                    return .published(version: try await storage.publish("\(scratch.path)/out", to: output, replacing: current))
                } catch let moved as PointerMoved {
                    let now = try await storage.pointer(of: output)
                    if let now, now.presetHash == presetHash {
                        return .skipped(why: "published with preset \(presetHash) by another writer meanwhile", version: now.version)
                    }
                    return .failed("pointer_moved: \(moved)\(now.map { " (it names \($0.version))" } ?? "")")
                }
            case .rejected(let code, let message), .retryable(let code, let message):
                return .failed("\(code): \(message)")
            case .interrupted:
                return .interrupted
            }
        } catch {
            return .failed("\(error)")
        }
    }
}
