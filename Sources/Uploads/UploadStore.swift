import Ingest
import NIOCore

/// Where `ingestd serve` keeps uploads: the spool on one host (``SpoolUploadStore``), or
/// PostgreSQL and a bucket for a fleet (``FleetUploadStore``). ``TusHandler`` keeps every tus
/// rule (tokens, versions, lengths, offsets, checksums, bounds, metrics); a store only makes,
/// finds, writes, ends and reports uploads. Refusals are thrown as ``TusRefusal``.
protocol UploadStore: Sendable {
    /// The token's next upload, empty: 409 once the token has made its uploads, 413 when the
    /// declared lengths pass `limit`.
    func create(token: UploadToken, limit: Int64, length: Int64, metadata: UploadMetadata) async throws -> PartialUpload

    /// Upload `part` of `id`; nil when none was made or its set was terminated. A complete
    /// upload not yet handed on as a job (a crash came between) is enqueued first.
    func find(_ id: String, part: Int) async throws -> PartialUpload?

    /// The one writer of `upload` at its acknowledged offset (409 while another request writes).
    func writer(_ upload: PartialUpload) async throws -> any UploadBodyWriter

    /// `DELETE`: the bytes go; the token cannot start again.
    func terminate(_ id: String) async throws

    /// What `GET /v1/jobs/{id}` answers; nil for an id with neither upload nor job.
    func status(_ id: String) async throws -> JobStatusReport?

    /// Where `DELETE /v1/jobs/{id}` records a deletion (``VideoDeletion/record(_:reason:in:)``):
    /// the store whose daemon or workers complete it.
    var deletions: any DeletionStore { get }

    /// Removes uploads whose token expired and hands on complete ones not yet jobs; returns the
    /// ids of unfinished uploads removed (``UploadUpkeep`` calls it every minute).
    func upkeep() async throws -> [String]
}

/// One request's body on its way into an upload. The handler checks lengths and checksums
/// before ``append(_:)``; ``commit(interrupted:)`` makes the bytes durable, then acknowledges
/// them; ``release()`` ends the writer whatever happened.
protocol UploadBodyWriter: AnyObject, Sendable {
    /// The upload as it was when the writer took it (its offset is where the body goes).
    var upload: PartialUpload { get }
    /// Bytes of this body taken so far.
    var received: Int64 { get }
    func append(_ bytes: ByteBuffer) async throws
    /// Durable first, then recorded; returns whether the upload is (now) a job.
    func commit(interrupted: Bool) async throws -> Bool
    func release() async
}
