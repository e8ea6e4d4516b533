import Foundation
import Ingest

/// Where `ingestd serve` keeps tus uploads on a single host: `<spool>/uploading/<id>/`, beside
/// the spool's states so that a finished upload becomes a job with one `rename(2)`.
///
///     uploading/<id>/state.json          the upload's record (``PartialUpload``)
///     uploading/<id>/.lock               flock: one writer at a time, across processes
///     uploading/<id>/job/upload/<name>   the bytes, already where the spool wants them
///
/// The last byte's `PATCH` renames `job/` to `work/<id>`: the spool then holds a job with the
/// token's id and nothing else can enqueue it twice (the rename happens once; a crash before
/// recording it is finished on the next request or start).
struct UploadDirectory: Sendable {
    let layout: SpoolLayout

    var root: String { "\(layout.root)/uploading" }
    func directory(_ id: String) -> String { "\(root)/\(id)" }
    func job(_ id: String) -> String { "\(directory(id))/job" }
    func data(_ upload: PartialUpload) -> String { "\(job(upload.id))/upload/\(upload.name)" }

    func prepare() throws {
        try layout.create()
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    }

    /// Whether the spool already has a job `id` (in any state).
    func spoolHasJob(_ id: String) -> Bool {
        var info = stat()
        return SpoolLayout.State.allCases.contains { lstat(layout.job(id, in: $0), &info) == 0 }
    }

    /// Makes a new, empty upload. One token, one upload: a second creation finds the directory.
    func create(id: String, length: Int64, name: String, metadata: String?, expires: Int64) throws(TusRefusal) -> PartialUpload {
        guard !spoolHasJob(id) else { throw TusRefusal(.conflict, "token_used", "job \(id) already exists") }
        let directory = directory(id)
        guard mkdir(directory, 0o755) == 0 else {
            if errno == EEXIST { throw TusRefusal(.conflict, "token_used", "this token already started an upload; resume it with HEAD and PATCH") }
            throw TusRefusal(.internalServerError, "storage", "cannot create \(directory): \(String(cString: strerror(errno)))")
        }
        let upload = PartialUpload(id: id, length: length, offset: 0, name: name, metadata: metadata, expires: expires, state: .receiving)
        do {
            try FileManager.default.createDirectory(atPath: "\(job(id))/upload", withIntermediateDirectories: true)
            let fd = open(data(upload), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
            guard fd >= 0 else { throw IngestError.cannotWrite(path: data(upload), reason: String(cString: strerror(errno))) }
            close(fd)
            try JSONFile.write(upload, to: "\(directory)/state.json")
            try Durability.syncDirectory(root)
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw TusRefusal(.internalServerError, "storage", "cannot create the upload: \(error)")
        }
        return upload
    }

    /// The upload's record, with a completion a crash interrupted finished first.
    func read(_ id: String) -> PartialUpload? {
        guard UploadToken.isValidID(id), var upload = JSONFile.read(PartialUpload.self, from: "\(directory(id))/state.json") else { return nil }
        if upload.state == .receiving, upload.offset == upload.length {
            upload = (try? complete(upload)) ?? upload
        }
        return upload
    }

    func save(_ upload: PartialUpload) throws {
        try JSONFile.write(upload, to: "\(directory(upload.id))/state.json")
    }

    /// Hands the finished upload to the spool: `job/` becomes `work/<id>` (the spool writes its
    /// `job.json` when it adopts it). Idempotent: a crash after the rename only leaves the record
    /// to be marked.
    @discardableResult
    func complete(_ upload: PartialUpload) throws -> PartialUpload {
        var upload = upload
        var info = stat()
        if lstat(job(upload.id), &info) == 0 {
            let target = layout.job(upload.id)
            guard rename(job(upload.id), target) == 0 else {
                throw IngestError.cannotWrite(path: target, reason: String(cString: strerror(errno)))
            }
            try Durability.syncDirectory(layout.directory(.work))
            try Durability.syncDirectory(directory(upload.id))
        }
        upload.state = .completed
        try save(upload)
        return upload
    }

    /// `DELETE`: the bytes go, the record stays (the token cannot start another upload).
    func terminate(_ upload: PartialUpload) throws {
        var upload = upload
        upload.state = .terminated
        try save(upload)
        try? FileManager.default.removeItem(atPath: job(upload.id))
    }

    /// Removes every upload (unfinished, or a finished one's record) whose token has expired,
    /// skipping any a request is writing; returns the ids of unfinished ones removed.
    func sweep(now: Date = Date()) -> [String] {
        var expired: [String] = []
        for id in (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [] where UploadToken.isValidID(id) {
            guard let upload = read(id), upload.expiresAt <= now, let lock = JobLock(directory: directory(id)) else { continue }
            try? FileManager.default.removeItem(atPath: directory(id))
            lock.release()
            if upload.state == .receiving { expired.append(id) }
        }
        return expired
    }
}
