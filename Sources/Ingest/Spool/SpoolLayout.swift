import Foundation

/// The spool directory tree. Every state is a directory and every transition is a `rename(2)`,
/// so an upload is always in exactly one place, whatever moment a process dies at.
///
///     incoming/              uploaders drop a video file (or directory) here, ideally by rename
///     work/<id>/             claimed: the original, job.json, progress.json, .lock
///     archive/<id>/          published: the original, job.json, manifest.json
///     rejected/<id>/         bad upload, never retried: the original, reason.json
///     failed/<id>/           retries exhausted: the original, reason.json
///     events.ndjson          append-only event log
///     metrics.prom           Prometheus text format, for node_exporter's textfile collector
public struct SpoolLayout: Sendable {
    public let root: String

    public init(root: String) {
        self.root = URL(fileURLWithPath: root).standardizedFileURL.path
    }

    public enum State: String, Sendable, CaseIterable {
        case work, archive, rejected, failed
    }

    public var incoming: String { "\(root)/incoming" }
    public func directory(_ state: State) -> String { "\(root)/\(state.rawValue)" }
    public func job(_ id: String, in state: State = .work) -> String { "\(directory(state))/\(id)" }
    public var events: String { "\(root)/events.ndjson" }
    public var metrics: String { "\(root)/metrics.prom" }

    /// Creates every directory of the layout.
    public func create() throws {
        for path in [incoming] + State.allCases.map(directory) {
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

enum JSONFile {
    static func write<T: Encodable>(_ value: T, to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        let data = try encoder.encode(value)
        let temporary = "\(path).tmp-\(getpid())"
        try data.write(to: URL(fileURLWithPath: temporary))
        try Durability.syncFile(temporary)
        guard rename(temporary, path) == 0 else {
            throw IngestError.cannotWrite(path: path, reason: String(cString: strerror(errno)))
        }
    }

    static func read<T: Decodable>(_ type: T.Type, from path: String) -> T? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try? decoder.decode(T.self, from: data)
    }
}
