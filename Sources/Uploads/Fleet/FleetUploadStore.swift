import Fleet
import Foundation
import Ingest
import Logging
import ObjectStorage
import Transcode

/// Fleet mode (`serve --database … --uploads s3://…`), the way tusd's S3 store works: each
/// upload's state is a row of `ingestd_uploads` (``FleetUploadRows``), its bytes the parts of
/// an S3 multipart upload of `<uploads>/<id>/<filename>` plus, below S3's 5 MiB part minimum,
/// a tail object beside it; so any `serve` host continues an upload another started. The last
/// byte completes the multipart upload and queues one job (``JobQueue/enqueue(_:)``, idempotent
/// by id) whose input is that object; in an upload set (one row per file, `part` its index),
/// the last byte of the last file queues one job whose input is the prefix `<id>/`.
struct FleetUploadStore: UploadStore {
    let rows: FleetUploadRows
    /// The job queue a complete upload goes to, as a store (its reads answer the status API).
    let jobs: PostgresStore
    /// The door to it, with `serve`'s preset: the one whose limits the phone was held to.
    let submitter: Submitter
    let s3: S3Client
    /// `s3://bucket/prefix`, the workers' `--uploads`.
    let root: S3Location
    let publicURL: String?
    /// Where each request's body (after the upload's tail) is gathered before it goes to the bucket.
    let scratch: String
    let logger: Logger

    func location(_ key: String) -> S3Location {
        var location = root
        location.key = key
        return location
    }

    /// The token's next upload: its name by ``UploadSetRule`` (checked before the multipart upload
    /// is made, and again under the id's lock as the row goes in), its object `<id>/<name>`.
    func create(token: UploadToken, limit: Int64, length: Int64, metadata: UploadMetadata) async throws -> PartialUpload {
        let rule: @Sendable ([FleetUpload]) throws -> String = { made in
            try UploadSetRule.nextName(files: token.files, terminated: made.contains(where: \.terminated), made: made.map { ($0.name, $0.length) },
                                       length: length, limit: limit, metadata: metadata)
        }
        if try await jobs.job(token.id)?.state == .deleted {
            throw TusRefusal(.gone, "deleted", "job \(token.id) was deleted; a deleted id is never used again")
        }
        let name = try rule(try await rows.set(token.id))
        let object = root.appending("\(token.id)/\(name)")
        let multipart = try await s3.createMultipartUpload(object, contentType: "application/octet-stream")
        do {
            return try await rows.insertNext(token.id, expires: token.expires) { made in
                guard try rule(made) == name else { throw TusRefusal(.conflict, "token_used", "\(name) is already being uploaded") }
                return FleetUpload(id: token.id, part: made.count + 1, length: length, offset: 0, name: name, metadata: metadata.raw, key: object.key,
                                   multipartID: multipart, parts: [], tail: 0, tailKey: nil, interrupted: false, terminated: false,
                                   completed: false, enqueued: false, files: token.files,
                                   playback: token.playback == nil && metadata.playback == nil ? nil : .strictest(token.playback, metadata.playback))
            }.upload
        } catch {
            try? await s3.abortUpload(object, uploadID: multipart)
            throw error
        }
    }

    func find(_ id: String, part: Int) async throws -> PartialUpload? {
        guard let row = try await rows.read(id, part: part), !row.terminated else {
            if try await jobs.job(id)?.state == .deleted { throw TusRefusal(.gone, "deleted", "job \(id) was deleted; send nothing more") }
            return nil
        }
        if row.offset == row.length, !row.enqueued {
            do { _ = try await finish(row) } catch { logger.warning("cannot finish a complete upload yet", metadata: ["id": "\(id)", "error": "\(error)"]) }
        }
        return row.upload
    }

    func writer(_ upload: PartialUpload) async throws -> any UploadBodyWriter {
        try await FleetUploadWriter.make(upload, store: self)
    }

    /// `DELETE`: every file of the upload's set ends (a set without one file can never be whole);
    /// their multipart uploads, tails and objects go.
    func terminate(_ id: String) async throws {
        let ended = try await rows.terminate(id)
        guard !ended.isEmpty else {
            if let row = try await rows.read(id, part: 1), !row.terminated {
                throw TusRefusal(.forbidden, "completed", "the upload is complete and is a job now; it cannot be terminated")
            }
            throw TusRefusal(.notFound, "unknown", "no such upload")
        }
        for row in ended { await discard(row, object: true) }
    }

    /// Removes an upload's bytes that no job needs: its multipart upload, its tails and, when
    /// `object`, the object it completed.
    func discard(_ row: FleetUpload, object: Bool) async {
        try? await s3.abortUpload(location(row.key), uploadID: row.multipartID)
        await deleteTails(row)
        if object { try? await s3.delete(location(row.key)) }
    }

    /// Makes a complete upload a job, idempotently: completes the multipart upload (one already
    /// completed, found by its object's size, counts), records that, queues the job (a job already
    /// queued with this id stays as it is), records that, and deletes the tail objects. A file of a
    /// set queues the set's job only if it is the last (``enqueueSet(_:files:)``). Any step may be
    /// repeated after a crash; none makes a second job. Returns whether the job is queued.
    @discardableResult
    func finish(_ row: FleetUpload) async throws -> Bool {
        guard !row.enqueued else { return true }
        guard row.offset == row.length, !row.terminated else { return false }
        let object = location(row.key)
        if !row.completed {
            do {
                try await s3.completeMultipartUpload(object, uploadID: row.multipartID, parts: row.parts)
            } catch {
                guard let info = try await s3.head(object), info.size == row.length else { throw error }
            }
            await deleteTails(row)  // before it counts as complete: a set's prefix shows the worker no tail
            try await rows.markCompleted(row.id, part: row.part)
        }
        if row.files > 1 { return try await enqueueSet(row.id, files: row.files) }
        try await submitter.submit([submitter.job(.path(object.description), id: row.id, owned: true, playback: row.playback)], to: jobs)
        try await rows.markEnqueued(row.id)
        await deleteTails(row)
        return true
    }

    /// Every tail object the upload's writers left (the current one and any a killed or stale writer wrote).
    func deleteTails(_ row: FleetUpload) async {
        for object in (try? await s3.list(location("\(row.key).tail."), atMost: 1000)) ?? [] {
            try? await s3.delete(location(object.key))
        }
    }
}
