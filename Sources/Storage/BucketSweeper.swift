import Foundation
import Ingest
import ObjectStorage

/// What names the versions under a bucket CDN: the fleet's job rows, or each id's `current.json`
/// on a single host. A ``BucketSweeper`` asks it once per sweep, after the listing.
public protocol VersionNames: Sendable {
    /// For `ids` (those with a version or a multipart upload under `root`, the CDN prefix ending
    /// in `/`), whether version `<id>/<version>` must stay: named, or perhaps still being written
    /// or played. `cutoff` is when the grace period began.
    func keeper(of ids: Set<String>, under root: S3Location, cutoff: Date) async throws -> (_ id: String, _ version: VersionName) -> Bool
}

/// Deletes what dead attempts left in a bucket CDN: each version prefix `<cdn>/<id>/<version>/`
/// (a ``VersionName``) that its ``VersionNames`` does not keep and whose newest object is older
/// than the grace period, and the multipart uploads under such versions begun before it.
/// Anything else under the CDN is never touched. Pending uploads are listed page after page.
public struct BucketSweeper: Sendable {
    public let client: S3Client
    public let names: any VersionNames
    public let cdn: S3Location
    /// How old a prefix's newest object (or an upload's start) must be before it is swept: above
    /// the longest a live attempt can take between its first upload and its pointer or record.
    public var grace: Duration

    public init(client: S3Client, names: any VersionNames, cdn: S3Location, grace: Duration) {
        self.client = client
        self.names = names
        self.cdn = cdn
        self.grace = grace
    }

    /// What one sweep found and did.
    public struct Report: Sendable, Codable, Equatable {
        /// Version prefixes deleted (`s3://…/<id>/<version>`), or that would be with `dryRun`.
        public var removed: [String] = []
        public var removedObjects = 0
        public var kept = 0
        public var abortedUploads = 0
    }

    /// `<id>/<version>` below the CDN.
    struct Prefix: Hashable {
        var id: String
        var version: VersionName
        var relative: String { "\(id)/\(version.name)" }
    }

    public func sweep(now: Date = Date(), dryRun: Bool = false) async throws -> Report {
        let root = try S3Location(bucket: cdn.bucket, key: cdn.key.isEmpty || cdn.key.hasSuffix("/") ? cdn.key : cdn.key + "/")
        var versions: [Prefix: (keys: [String], newest: Date)] = [:]
        for object in try await client.list(root) {
            guard let prefix = Self.prefix(of: object.key, root: root) else { continue }
            var entry = versions[prefix] ?? ([], .distantPast)
            entry.keys.append(object.key)
            entry.newest = max(entry.newest, object.lastModified ?? now)
            versions[prefix] = entry
        }
        let pending = try await client.pendingUploads(root)
        let cutoff = now.addingTimeInterval(-grace.seconds)
        let ids = Set(versions.keys.map(\.id) + pending.compactMap { Self.prefix(of: $0.key, root: root)?.id })
        let keep = try await names.keeper(of: ids, under: root, cutoff: cutoff)
        var report = Report()
        for (prefix, entry) in versions.sorted(by: { $0.key.relative < $1.key.relative }) {
            guard !keep(prefix.id, prefix.version), entry.newest < cutoff else {
                report.kept += 1
                continue
            }
            report.removed.append(root.appending(prefix.relative).description)
            report.removedObjects += entry.keys.count
            if !dryRun { try await delete(entry.keys) }
        }
        for upload in pending where (upload.initiated ?? now) < cutoff {
            guard let prefix = Self.prefix(of: upload.key, root: root), !keep(prefix.id, prefix.version) else { continue }
            report.abortedUploads += 1
            if !dryRun { try await client.abortUpload(try S3Location(bucket: cdn.bucket, key: upload.key), uploadID: upload.uploadID) }
        }
        return report
    }

    /// The version prefix of a key `<root><id>/<version>/…`, or nil for any other key.
    static func prefix(of key: String, root: S3Location) -> Prefix? {
        guard key.hasPrefix(root.key) else { return nil }
        let parts = key.dropFirst(root.key.count).split(separator: "/", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, let version = VersionName(parts[1]) else { return nil }
        return Prefix(id: String(parts[0]), version: version)
    }

    private func delete(_ keys: [String]) async throws {
        _ = try await concurrentMap(keys, atMost: 8) { [client, bucket = cdn.bucket] key in
            try await client.delete(try S3Location(bucket: bucket, key: key))
        }
    }
}
