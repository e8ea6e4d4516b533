import Foundation
import Ingest
import NIOCore
import ObjectStorage

/// One request's body into a fleet upload. It holds the upload's writer lease (renewed as the
/// body streams; another request meanwhile gets 409), gathers the upload's tail and then the
/// body in a local file, and at the end sends that to the bucket: as the next part when it
/// reaches S3's part minimum or ends the upload, else as a new tail object. Only then is the new
/// offset recorded, under the lease: an acknowledged offset is in the bucket and the row.
final class FleetUploadWriter: UploadBodyWriter, @unchecked Sendable {
    private(set) var upload: PartialUpload
    private var row: FleetUpload
    private let store: FleetUploadStore
    private let writer: String
    private let path: String
    private var file: BlockFile
    private var renewed = ContinuousClock.now
    private var released = false

    private init(row: FleetUpload, store: FleetUploadStore, writer: String, path: String, fd: Int32) {
        self.row = row
        upload = row.upload
        self.store = store
        self.writer = writer
        self.path = path
        file = BlockFile(fd: fd, at: row.tail)
    }

    /// Takes the lease (409 while another request holds it) and fetches the tail.
    static func make(_ upload: PartialUpload, store: FleetUploadStore) async throws -> FleetUploadWriter {
        let writer = UUID().uuidString.lowercased()
        guard let row = try await store.rows.acquire(upload.id, part: upload.part, writer: writer) else {
            guard try await store.rows.read(upload.id, part: upload.part)?.terminated == false else { throw TusRefusal(.notFound, "unknown", "no such upload") }
            throw TusRefusal(.conflict, "locked", "another request is writing this upload; retry after it ends")
        }
        let path = "\(store.scratch)/\(row.id).\(row.part).\(writer)"
        do {
            if row.tail > 0, let tail = row.tailKey {
                let size = try await store.s3.download(store.location(tail), to: path, limit: row.tail)
                guard size == row.tail else {
                    throw TusRefusal(.internalServerError, "storage", "the upload's tail \(tail) holds \(size) bytes, its record \(row.tail)")
                }
            }
            let fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw TusRefusal(.internalServerError, "storage", "cannot open \(path): \(String(cString: strerror(errno)))") }
            return FleetUploadWriter(row: row, store: store, writer: writer, path: path, fd: fd)
        } catch {
            unlink(path)
            try? await store.rows.release(row.id, part: row.part, writer: writer)
            throw error
        }
    }

    deinit {
        if !released {
            close(file.fd)
            unlink(path)
        }
    }

    var received: Int64 { file.end - row.tail }

    func append(_ bytes: ByteBuffer) async throws {
        try await file.append(bytes)
        if ContinuousClock.now - renewed > FleetUploadRows.lease / 3 { try await renew() }
    }

    private func renew() async throws {
        renewed = .now
        guard try await store.rows.renew(row.id, part: row.part, writer: writer) else {
            throw TusRefusal(.conflict, "locked", "this request lost the upload (terminated, or taken over after a stall)")
        }
    }

    func commit(interrupted: Bool) async throws -> Bool {
        try await file.flush()
        let total = file.written, received = total - row.tail
        guard received > 0 else { return row.enqueued }
        var next = row
        next.offset += received
        next.interrupted = interrupted
        if next.offset == next.length || total >= S3Client.minimumPartSize {
            // A number of its own, handed out under the lease (never one another writer used).
            guard let number = try await store.rows.nextPart(row.id, part: row.part, writer: writer) else {
                throw TusRefusal(.conflict, "locked", "this request lost the upload (terminated, or taken over after a stall)")
            }
            let (s3, object, multipart, path) = (store.s3, store.location(row.key), row.multipartID, path)
            let etag = try await holdingLease { try await s3.uploadPart(object, uploadID: multipart, number: number, file: path, range: 0..<total) }
            next.parts.append(.init(number: number, etag: etag, size: total))
            next.tail = 0
            next.tailKey = nil
        } else {
            // A new name per write: a stale writer's tail never replaces the one the row names.
            let key = "\(row.key).tail.\(next.offset).\(writer)"
            let (s3, object, path) = (store.s3, store.location(key), path)
            try await holdingLease { try await s3.upload(file: path, to: object, contentType: "application/octet-stream") }
            next.tail = total
            next.tailKey = key
        }
        guard try await store.rows.record(next, writer: writer) else {
            throw TusRefusal(.conflict, "locked", "this request lost the upload before its bytes were recorded; HEAD and resume")
        }
        if let old = row.tailKey, old != next.tailKey { try? await store.s3.delete(store.location(old)) }
        row = next
        upload = next.upload
        guard next.offset == next.length else { return false }
        do { return try await store.finish(next) } catch {
            // Acknowledged all the same: the next HEAD, or the upkeep within a minute, finishes it.
            store.logger.warning("upload complete but not yet a job", metadata: ["id": "\(row.id)", "error": "\(error)"])
            return false
        }
    }

    /// Runs a bucket write while the lease is renewed beside it: a slow link to the bucket does not
    /// let another request take the upload meanwhile. A renewal refused (the lease was lost: a
    /// host frozen longer than it) stops the write; what it sent is under a part number or tail
    /// key no other writer uses, and its record is refused.
    @discardableResult
    private func holdingLease<T: Sendable>(_ write: @escaping @Sendable () async throws -> T) async throws -> T {
        let (rows, id, part, writer) = (store.rows, row.id, row.part, writer)
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await write() }
            group.addTask {
                while !Task.isCancelled {
                    try await SteadyTimer.sleep(for: FleetUploadRows.lease / 3)
                    if (try? await rows.renew(id, part: part, writer: writer)) == false {
                        throw TusRefusal(.conflict, "locked", "this request lost the upload while sending it to the bucket")
                    }
                }
                return nil
            }
            defer { group.cancelAll() }
            while let done = try await group.next() {
                if let done { return done }
            }
            throw CancellationError()
        }
    }

    func release() async {
        guard !released else { return }
        released = true
        close(file.fd)
        unlink(path)
        try? await store.rows.release(row.id, part: row.part, writer: writer)
    }
}
