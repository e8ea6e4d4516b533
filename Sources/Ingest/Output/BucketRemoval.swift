import Foundation

/// Deletion in a bucket CDN: every object under `CDN/<id>/` (every version, the pointer), the
/// pointer and the masters first.
extension HeldBucketTarget {
    public func contents(of id: String) async throws -> [String] {
        try await storage.objects(under: prefix(id)).map { "\(id)/\($0)" }
    }

    public func remove(_ id: String) async throws { try await storage.removeObjects(under: prefix(id)) }

    public func oldBytesKept() async throws -> String? {
        guard try await storage.keepsOldVersions(of: root) else { return nil }
        return "the bucket of \(root) keeps versions: the removed objects' old versions stay behind delete markers until a lifecycle rule expires them"
    }
}

extension GrowingBucketTarget {
    public func contents(of id: String) async throws -> [String] { try await held.contents(of: id) }
    public func remove(_ id: String) async throws { try await held.remove(id) }
    public func oldBytesKept() async throws -> String? { try await held.oldBytesKept() }
}

/// Signed playback in a bucket: the object `<id>/.playback-signed` (what nginx in front of the
/// bucket asks for before an unsigned path: docs/DEPLOY.md).
extension HeldBucketTarget {
    public func markPlayback(of id: String, _ policy: PlaybackPolicy) async throws {
        try await storage.setObject("\(prefix(id))/\(PlaybackPolicy.markerName)", present: policy == .signed)
    }
}

extension GrowingBucketTarget {
    public func markPlayback(of id: String, _ policy: PlaybackPolicy) async throws { try await held.markPlayback(of: id, policy) }
}
