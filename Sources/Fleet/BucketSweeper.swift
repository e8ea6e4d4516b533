import Foundation
import Ingest
import Logging
import ObjectStorage
import PostgresNIO

/// Deletes what the fleet's attempts left in a bucket CDN and no job names: the version prefix
/// (`<cdn>/<id>/t<token>/`) of an attempt whose worker died, froze past its lease or lost the
/// database before its end was recorded, and multipart uploads such attempts began. A prefix is
/// kept while its job's row names it (`output`), while its attempt may still be running (the row
/// is `running` with that token), and while its newest object is younger than the grace period.
public struct BucketSweeper: Sendable {
    public let client: S3Client
    public let queue: JobQueue
    public let cdn: S3Location
    /// How old a prefix's newest object (or an upload's start) must be before it is swept: above
    /// the longest a live attempt can take between its first upload and its record.
    public var grace: Duration

    public init(client: S3Client, queue: JobQueue, cdn: S3Location, grace: Duration) {
        self.client = client
        self.queue = queue
        self.cdn = cdn
        self.grace = grace
    }

    /// What one sweep found and did.
    public struct Report: Sendable, Codable, Equatable {
        /// Version prefixes deleted (`s3://…/<id>/t<token>`), or that would be with `dryRun`.
        public var removed: [String] = []
        public var removedObjects = 0
        public var kept = 0
        public var abortedUploads = 0
    }

    public func sweep(now: Date = Date(), dryRun: Bool = false) async throws -> Report {
        let base = cdn.key.isEmpty || cdn.key.hasSuffix("/") ? cdn.key : cdn.key + "/"
        var versions: [String: (keys: [String], newest: Date)] = [:]
        for object in try await client.list(try S3Location(bucket: cdn.bucket, key: base)) {
            let parts = object.key.dropFirst(base.count).split(separator: "/", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3, parts[1].first == "t", Int64(parts[1].dropFirst()) != nil else { continue }  // not an attempt's
            let prefix = "\(base)\(parts[0])/\(parts[1])"
            var entry = versions[prefix] ?? ([], .distantPast)
            entry.keys.append(object.key)
            entry.newest = max(entry.newest, object.lastModified ?? now)
            versions[prefix] = entry
        }
        let (named, live) = try await references(prefix: "s3://\(cdn.bucket)/\(base)")
        var report = Report()
        let cutoff = now.addingTimeInterval(-grace.seconds)
        for (prefix, entry) in versions.sorted(by: { $0.key < $1.key }) {
            let url = "s3://\(cdn.bucket)/\(prefix)"
            guard !named.contains(url), !live.contains(url), entry.newest < cutoff else {
                report.kept += 1
                continue
            }
            report.removed.append(url)
            report.removedObjects += entry.keys.count
            if !dryRun { try await delete(entry.keys) }
        }
        for upload in try await client.pendingUploads(try S3Location(bucket: cdn.bucket, key: base)) where (upload.initiated ?? now) < cutoff {
            report.abortedUploads += 1
            if !dryRun { try await client.abortUpload(try S3Location(bucket: cdn.bucket, key: upload.key), uploadID: upload.uploadID) }
        }
        return report
    }

    /// Outputs the rows name, and the prefixes of attempts still running.
    private func references(prefix: String) async throws -> (named: Set<String>, live: Set<String>) {
        try await queue.client.withConnection(within: queue.timeout) { [logger = queue.logger] connection in
            var named: Set<String> = [], live: Set<String> = []
            let pattern = prefix.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
                .replacingOccurrences(of: "_", with: "\\_") + "%"
            let rows = try await connection.query("SELECT output FROM ingestd_jobs WHERE output LIKE \(pattern)", logger: logger)
            for try await output in rows.decode(String.self) { named.insert(output) }
            let running = try await connection.query("SELECT id, token FROM ingestd_jobs WHERE state = 'running'", logger: logger)
            for try await (id, token) in running.decode((String, Int64).self) { live.insert("\(prefix)\(id)/t\(token)") }
            return (named, live)
        }
    }

    private func delete(_ keys: [String]) async throws {
        _ = try await concurrentMap(keys, atMost: 8) { [client, bucket = cdn.bucket] key in
            try await client.delete(try S3Location(bucket: bucket, key: key))
        }
    }
}
