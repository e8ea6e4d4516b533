import Foundation
import Ingest
import Logging
import ObjectStorage
import PostgresNIO

/// Deletes what the fleet's attempts left in a bucket CDN and no job names: the version prefix
/// (`<cdn>/<id>/t<token>/`) of an attempt whose worker died, froze past its lease or lost the
/// database before its end was recorded, and multipart uploads such attempts began. Only an
/// attempt of a job that exists (its token at most the row's) is ever deleted; it is kept while
/// its row names it (`output`), while it may still be running (the row is `running` with that
/// token), and while its newest object is younger than the grace period. Rows are read in one
/// statement, after the listing; pending multipart uploads are listed page after page.
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
        var versions: [String: (keys: [String], newest: Date)] = [:]  // "<id>/t<token>" → its objects
        for object in try await client.list(try S3Location(bucket: cdn.bucket, key: base)) {
            guard let version = Self.version(of: object.key, base: base) else { continue }
            var entry = versions[version] ?? ([], .distantPast)
            entry.keys.append(object.key)
            entry.newest = max(entry.newest, object.lastModified ?? now)
            versions[version] = entry
        }
        let pending = try await client.pendingUploads(try S3Location(bucket: cdn.bucket, key: base))
        let ids = Set((Array(versions.keys) + pending.compactMap { Self.version(of: $0.key, base: base) }).map { String($0.split(separator: "/")[0]) })
        let jobs = try await rows(ids)
        var report = Report()
        let cutoff = now.addingTimeInterval(-grace.seconds)
        for (version, entry) in versions.sorted(by: { $0.key < $1.key }) {
            let url = "s3://\(cdn.bucket)/\(base)\(version)"
            guard Self.isGarbage(version, url: url, jobs: jobs), entry.newest < cutoff else {
                report.kept += 1
                continue
            }
            report.removed.append(url)
            report.removedObjects += entry.keys.count
            if !dryRun { try await delete(entry.keys) }
        }
        for upload in pending where (upload.initiated ?? now) < cutoff {
            guard let version = Self.version(of: upload.key, base: base),
                  Self.isGarbage(version, url: "s3://\(cdn.bucket)/\(base)\(version)", jobs: jobs) else { continue }
            report.abortedUploads += 1
            if !dryRun { try await client.abortUpload(try S3Location(bucket: cdn.bucket, key: upload.key), uploadID: upload.uploadID) }
        }
        return report
    }

    /// `<id>/t<token>` of a key `base<id>/t<token>/…`, or nil for any other key.
    static func version(of key: String, base: String) -> String? {
        guard key.hasPrefix(base) else { return nil }
        let parts = key.dropFirst(base.count).split(separator: "/", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, parts[1].first == "t", Int64(parts[1].dropFirst()) != nil else { return nil }
        return "\(parts[0])/\(parts[1])"
    }

    /// A job's row as the sweeper needs it.
    struct Row {
        var token: Int64
        var running: Bool
        var output: String?
    }

    /// `<id>/t<token>` is an attempt of a job that exists, older than or equal to its latest,
    /// not the one running, and not the one its row names. Anything else under the CDN (not a
    /// job's, or newer than the row says) is never touched.
    static func isGarbage(_ relative: String, url: String, jobs: [String: Row]) -> Bool {
        let parts = relative.split(separator: "/")
        guard parts.count == 2, parts[1].first == "t", let token = Int64(parts[1].dropFirst()), let row = jobs[String(parts[0])] else { return false }
        return token <= row.token && !(row.running && token == row.token) && row.output != url
    }

    /// The rows of `ids`, read in one statement (one snapshot: an attempt that publishes between
    /// two reads cannot look neither running nor named).
    private func rows(_ ids: Set<String>) async throws -> [String: Row] {
        guard !ids.isEmpty else { return [:] }
        return try await queue.client.withConnection(within: queue.timeout) { [logger = queue.logger] connection in
            var rows: [String: Row] = [:]
            let list = Array(ids)
            let result = try await connection.query("SELECT id, token, state = 'running', output FROM ingestd_jobs WHERE id = ANY(\(list))", logger: logger)
            for try await (id, token, running, output) in result.decode((String, Int64, Bool, String?).self) {
                rows[id] = Row(token: token, running: running, output: output)
            }
            return rows
        }
    }

    private func delete(_ keys: [String]) async throws {
        _ = try await concurrentMap(keys, atMost: 8) { [client, bucket = cdn.bucket] key in
            try await client.delete(try S3Location(bucket: bucket, key: key))
        }
    }
}
