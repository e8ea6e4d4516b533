import Foundation

/// The spool directory tree. Every state is a directory and every transition is a `rename(2)`,
/// so an upload is always in exactly one place, whatever moment a process dies at.
///
///     incoming/              uploaders drop a video file (or directory) here, ideally by rename
///     work/<id>/             claimed: upload/<original>, job.json, progress.json, result.json, .lock
///     archive/<id>/          published: upload/<original>, job.json
///     rejected/<id>/         bad upload, never retried: upload/<original>, job.json, reason.json
///     failed/<id>/           retries exhausted: upload/<original>, job.json, reason.json
///     queued/<id>/           handed to the fleet's job queue (`watch --database`): upload/<original>,
///                            job.json, and `enqueued` once the queue has it; the job row tells the rest
///
/// The original keeps the exact name (bytes) it arrived with, alone in `upload/`: no name an
/// uploader chooses can meet the job's own files, which sit one level up.
///     events.ndjson          append-only event log
///     metrics.prom           Prometheus text format, for node_exporter's textfile collector
///     outbox/                webhook events not yet delivered, delivered and dead (see `Outbox`)
public struct SpoolLayout: Sendable {
    public let root: String

    public init(root: String) {
        self.root = URL(fileURLWithPath: root).standardizedFileURL.path
    }

    public enum State: String, Sendable, CaseIterable {
        case work, archive, rejected, failed, queued
    }

    public var incoming: String { "\(root)/incoming" }
    public func directory(_ state: State) -> String { "\(root)/\(state.rawValue)" }
    public func job(_ id: String, in state: State = .work) -> String { "\(directory(state))/\(id)" }
    /// The directory that holds the original upload, and nothing else.
    public func upload(_ id: String, in state: State = .work) -> String { "\(job(id, in: state))/upload" }
    public var events: String { "\(root)/events.ndjson" }
    public var metrics: String { "\(root)/metrics.prom" }
    /// The webhook outbox (see ``Outbox``).
    public var outbox: Outbox { Outbox(root: "\(root)/outbox") }

    /// Creates every directory of the layout (`queued/` only where uploads are handed to a queue).
    public func create() throws {
        for path in [incoming] + State.allCases.filter({ $0 != .queued }).map(directory) {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        }
    }
}

/// What the daemon remembers about a claimed job, in `work/<id>/job.json`.
public struct JobRecord: Codable, Sendable, Equatable {
    public var id: String
    /// File (or directory) name of the original inside the job directory.
    public var original: String
    public var receivedAt: Date
    /// Failed attempts so far (crashes, timeouts, retryable errors).
    public var attempts: Int
    /// Earliest time of the next attempt (exponential backoff).
    public var notBefore: Date?
    public var lastError: String?
}

/// Why an upload ended in `rejected/` or `failed/`, written as `reason.json` beside the original.
public struct Reason: Codable, Sendable, Equatable {
    /// Machine code: `too_large`, `too_long`, `no_video_stream`, `corrupt_input`, `crashed`, `timeout`…
    public var code: String
    /// What happened, with the file, the measured value and the limit where there is one.
    public var message: String
    public var attempts: Int
    public var at: Date

    public init(code: String, message: String, attempts: Int, at: Date = Date()) {
        self.code = code
        self.message = message
        self.attempts = attempts
        self.at = at
    }
}

/// JSON files of the spool and the job processes: written whole under a fresh name (created
/// exclusively, never through a link), fsynced, renamed into place, the directory fsynced.
public enum JSONFile {
    public static func write<T: Encodable>(_ value: T, to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        let data = try encoder.encode(value)
        let temporary = "\(path).tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        // Created exclusively and never through a link: a planted name cannot redirect the write.
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw IngestError.cannotWrite(path: temporary, reason: String(cString: strerror(errno))) }
        let written = data.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd) == 0
        close(fd)
        guard written == data.count, synced, rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw IngestError.cannotWrite(path: path, reason: reason)
        }
        try Durability.syncDirectory((path as NSString).deletingLastPathComponent)
    }

    public static func read<T: Decodable>(_ type: T.Type, from path: String) -> T? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try? decoder.decode(T.self, from: data)
    }
}
