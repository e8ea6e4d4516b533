import Foundation
import Ingest

/// Where `ingestd serve` keeps tus uploads on a single host: `<spool>/uploading/<id>/`, beside
/// the spool's states so that a finished upload becomes a job with one `rename(2)`.
///
///     uploading/<id>/set.json                  what the token allows (``UploadSet``)
///     uploading/<id>/.lock                     flock: creation, completion, termination
///     uploading/<id>/files/<part>/state.json   each tus upload (``PartialUpload``)
///     uploading/<id>/files/<part>/.lock        flock: one writer at a time, across processes
///     uploading/<id>/job/upload/<name>         a lone video file's bytes, or
///     uploading/<id>/job/upload/<id>/<name>    an upload set's files (upload.json, clips, sound track)
///
/// When the last byte of the last file lands, the upload goes through the one door
/// (``Submitter``) and `job/`, its record written, is renamed to `work/<id>` (``Spool/admit(_:)``):
/// the spool then holds a job with the token's id, already laid out as the spool lays out its
/// jobs, and nothing can enqueue it twice (the rename happens once; a crash before it is
/// finished on the next request).
struct UploadDirectory: Sendable {
    let layout: SpoolLayout
    /// The door, with `serve`'s preset (the spool runs the job with its daemon's own).
    var submitter = Submitter(preset: .builtIn)

    var root: String { "\(layout.root)/uploading" }
    func directory(_ id: String) -> String { "\(root)/\(id)" }
    func job(_ id: String) -> String { "\(directory(id))/job" }
    func part(_ id: String, _ part: Int) -> String { "\(directory(id))/files/\(part)" }
    func data(_ upload: PartialUpload) -> String { "\(job(upload.id))/\(upload.path)" }

    func prepare() throws {
        try layout.create()
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    }

    /// Whether the spool already has a job `id` (in any state).
    func spoolHasJob(_ id: String) -> Bool {
        var info = stat()
        return SpoolLayout.State.allCases.contains { lstat(layout.job(id, in: $0), &info) == 0 }
    }

    func set(_ id: String) -> UploadSet? {
        guard UploadToken.isValidID(id) else { return nil }
        return JSONFile.read(UploadSet.self, from: "\(directory(id))/set.json")
    }

    /// The set's uploads made so far, by part.
    func parts(_ id: String) -> [PartialUpload] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "\(directory(id))/files")) ?? []
        return names.compactMap(Int.init).sorted().compactMap { read(id, part: $0) }
    }

    func read(_ id: String, part: Int) -> PartialUpload? {
        guard UploadToken.isValidID(id) else { return nil }
        return JSONFile.read(PartialUpload.self, from: "\(self.part(id, part))/state.json")
    }

    /// Whether the set's job has been handed to the spool: every file complete and `job/` gone.
    func isEnqueued(_ id: String) -> Bool {
        guard let set = set(id), !set.terminated else { return false }
        let made = parts(id)
        var info = stat()
        return made.count == set.files && made.allSatisfy(\.isComplete) && lstat(job(id), &info) != 0
    }

    /// Makes the token's next upload, empty. One token, one job: every creation past the token's
    /// `files`, after the job was enqueued or the set terminated, is refused (409); so is a set
    /// whose declared lengths together pass the token's limit (413).
    func create(token: UploadToken, limit: Int64, length: Int64, metadata: UploadMetadata) throws(TusRefusal) -> PartialUpload {
        try? FileManager.default.createDirectory(atPath: directory(token.id), withIntermediateDirectories: false)
        guard let lock = JobLock(directory: directory(token.id)) else {
            throw TusRefusal(.conflict, "locked", "another request is creating or finishing this upload; retry")
        }
        defer { lock.release() }
        let set: UploadSet
        if let existing = self.set(token.id) {
            set = existing
        } else {
            guard !layout.isDeleted(token.id) else { throw TusRefusal(.gone, "deleted", "job \(token.id) was deleted; a deleted id is never used again") }
            guard !spoolHasJob(token.id) else { throw TusRefusal(.conflict, "token_used", "job \(token.id) already exists") }
            let asked: PlaybackPolicy? = token.playback == nil && metadata.playback == nil ? nil : .strictest(token.playback, metadata.playback)
            set = UploadSet(id: token.id, files: token.files, expires: token.expires, playback: asked)
            do { try JSONFile.write(set, to: "\(directory(token.id))/set.json") } catch {
                throw TusRefusal(.internalServerError, "storage", "cannot create the upload: \(error)")
            }
        }
        let made = parts(token.id)
        let name = try UploadSetRule.nextName(files: set.files, terminated: set.terminated, made: made.map { ($0.name, $0.length) },
                                              length: length, limit: limit, metadata: metadata)
        let upload = PartialUpload(id: token.id, part: made.count + 1, length: length, offset: 0, name: name,
                                   path: set.files == 1 ? "upload/\(name)" : "upload/\(token.id)/\(name)", metadata: metadata.raw)
        do {
            try FileManager.default.createDirectory(atPath: (data(upload) as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            // Truncated, not exclusive: a crash between this file and its record leaves the part
            // to be made again under the same name. Never through a link.
            let fd = open(data(upload), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o644)
            guard fd >= 0 else { throw IngestError.cannotWrite(path: data(upload), reason: String(cString: strerror(errno))) }
            close(fd)
            try FileManager.default.createDirectory(atPath: part(token.id, upload.part), withIntermediateDirectories: true)
            try save(upload)
        } catch {
            throw TusRefusal(.internalServerError, "storage", "cannot create the upload: \(error)")
        }
        return upload
    }

    func save(_ upload: PartialUpload) throws {
        try JSONFile.write(upload, to: "\(part(upload.id, upload.part))/state.json")
    }

    /// Hands the set to the spool once every one of its files is complete: `job/` becomes
    /// `work/<id>` with its `job.json`. Idempotent, and safe to call after any write: returns
    /// whether the job is (now) enqueued.
    @discardableResult
    func enqueueIfComplete(_ id: String) throws -> Bool {
        guard let set = set(id), !set.terminated else { return false }
        if isEnqueued(id) { return true }
        let made = parts(id)
        guard made.count == set.files, made.allSatisfy(\.isComplete) else { return false }
        guard let lock = JobLock(directory: directory(id)) else { return false }  // another request is doing it
        defer { lock.release() }
        var info = stat()
        guard lstat(job(id), &info) == 0 else { return true }
        guard try Spool(layout: layout).admit(submitter.job(.soleEntry(of: "\(job(id))/upload"), id: id, playback: set.playback)) else {
            throw IngestError.cannotWrite(path: layout.job(id), reason: "a job with this id exists already (another upload took it)")
        }
        try Durability.syncDirectory(directory(id))
        return true
    }

    /// `DELETE`: the set's bytes go, its record stays (the token cannot start another upload).
    func terminate(_ id: String) throws(TusRefusal) {
        guard let lock = JobLock(directory: directory(id)) else { throw TusRefusal(.conflict, "locked", "another request is finishing this upload") }
        defer { lock.release() }
        guard var set = set(id), !set.terminated else { throw TusRefusal(.notFound, "unknown", "no such upload") }
        guard !isEnqueued(id) else { throw TusRefusal(.forbidden, "completed", "the upload is complete and is a job now; it cannot be terminated") }
        set.terminated = true
        do { try JSONFile.write(set, to: "\(directory(id))/set.json") } catch {
            throw TusRefusal(.internalServerError, "storage", "cannot terminate the upload: \(error)")
        }
        try? FileManager.default.removeItem(atPath: job(id))
    }

    /// Removes every set whose token has expired, skipping any a request is working on; returns
    /// the ids of those that had not become jobs.
    func sweep(now: Date = Date()) -> [String] {
        var expired: [String] = []
        for id in (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [] where UploadToken.isValidID(id) {
            guard let set = set(id), set.expiresAt <= now, let lock = JobLock(directory: directory(id)) else { continue }
            let unfinished = !set.terminated && !isEnqueued(id)
            try? FileManager.default.removeItem(atPath: directory(id))
            lock.release()
            if unfinished { expired.append(id) }
        }
        return expired
    }
}
