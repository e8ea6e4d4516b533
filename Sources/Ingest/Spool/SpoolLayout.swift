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
///     deleted/<id>.json      a deleted video's tombstone (``Tombstone``): recorded before anything of
///                            it is removed, and what stays of it once everything else went
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
    /// Tombstones of deleted videos (made by the first deletion: a spool that never had one, or is
    /// read-only for now, works without it).
    public var deleted: String { "\(root)/deleted" }
    /// Job `id`'s tombstone (``Tombstone``), there once its deletion is recorded.
    public func tombstone(_ id: String) -> String { "\(deleted)/\(id).json" }
    /// Whether job `id` was deleted: the fence every claim, renewal, publish, retry, reprocess
    /// and new upload of the spool checks.
    public func isDeleted(_ id: String) -> Bool { access(tombstone(id), F_OK) == 0 }
    /// Where `serve` keeps tus uploads in progress (`Uploads`' `UploadDirectory`).
    public func uploading(_ id: String) -> String { "\(root)/uploading/\(id)" }
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
