import Foundation

/// Deletion in the spool (``VideoDeletion`` holds the order): the tombstone `deleted/<id>.json`
/// is the fence. Every claim, renewal and end checks it under the job's lock, so an attempt
/// running when it is written stops at its next renewal and publishes nothing; its files are
/// removed once no process holds the job's lock. Webhooks go to the outbox, which the daemon
/// that owns the spool sends from.
extension SpoolStore: DeletionStore {
    public func recordDeletion(_ id: String, reason: DeletionReason, at: Date) async throws -> RecordedDeletion {
        if let earlier = try await tombstone(id) { return .earlier(earlier) }
        var info = stat()
        let places = SpoolLayout.State.allCases.map { layout.job(id, in: $0) } + [layout.uploading(id)]
        guard places.contains(where: { lstat($0, &info) == 0 }) else { return .unknown }
        try FileManager.default.createDirectory(atPath: layout.deleted, withIntermediateDirectories: true)
        let tombstone = Tombstone(id: id, reason: reason, at: at)
        // Written aside, then linked into place: of two deletes at once, one records and the other finds it.
        let aside = "\(layout.deleted)/.\(id).json.new-\(getpid())"
        try JSONFile.write(tombstone, to: aside)
        defer { unlink(aside) }
        guard link(aside, layout.tombstone(id)) == 0 else {
            guard errno == EEXIST, let earlier = try await self.tombstone(id) else {
                throw IngestError.cannotWrite(path: layout.tombstone(id), reason: String(cString: strerror(errno)))
            }
            return .earlier(earlier)
        }
        try Durability.syncDirectory(layout.deleted)
        events.append("deleted", id, ["code": reason.code.rawValue, "reason": reason.text, "by": reason.by])
        return .recorded(tombstone)
    }

    public func tombstone(_ id: String) async throws -> Tombstone? {
        guard UploadManifest.isValidID(id), layout.isDeleted(id) else { return nil }
        return try JSONFile.load(Tombstone.self, from: layout.tombstone(id))
    }

    public func pendingDeletions() async throws -> [Tombstone] { tombstones().filter { $0.completedAt == nil } }

    public func deletionCounts() async throws -> [DeletionCode: Int] {
        tombstones().reduce(into: [:]) { $0[$1.reason.code, default: 0] += 1 }
    }

    private func tombstones() -> [Tombstone] {
        Self.visibleEntries(layout.deleted).filter { $0.hasSuffix(".json") }.sorted()
            .compactMap { JSONFile.read(Tombstone.self, from: "\(layout.deleted)/\($0)") }
    }

    /// A job folder whose lock a live process holds: a running attempt (stopped at its next
    /// renewal), a reprocess of it, a retry under way.
    public func stillWriting(_ id: String) async throws -> String? {
        for state in SpoolLayout.State.allCases where JobLock.isHeld(directory: layout.job(id, in: state)) {
            return "a process holds \(state.rawValue)/\(id) (\(state == .work ? "its attempt stops at its next lease renewal, within 20 s" : "a reprocess or retry of it"))"
        }
        return nil
    }

    /// The spool's originals are its own files (``removeUpload(_:erase:)``).
    public func remoteInput(_ id: String) async throws -> String? { nil }

    public func notePurge(_ tombstone: Tombstone) async throws { try JSONFile.write(tombstone, to: layout.tombstone(tombstone.id)) }

    /// Each folder of the job (the original, its record, reason and manifest) and a tus upload
    /// in progress are renamed aside under their lock, then removed.
    public func removeUpload(_ id: String, erase: Bool) async throws {
        let folders = SpoolLayout.State.allCases.map { (layout.job(id, in: $0), $0.rawValue) } + [(layout.uploading(id), "uploading")]
        for (folder, name) in folders where FileManager.default.fileExists(atPath: folder) {
            guard let lock = JobLock(directory: folder) else { throw IngestError.cannotWrite(path: folder, reason: "a process holds it; retried later") }
            let aside = "\(layout.deleted)/.\(id).\(name)"
            guard rename(folder, aside) == 0 else {
                throw IngestError.cannotWrite(path: folder, reason: String(cString: strerror(errno)))
            }
            lock.release()
            try Durability.syncDirectory((folder as NSString).deletingLastPathComponent)
        }
        for name in (try? FileManager.default.contentsOfDirectory(atPath: layout.deleted)) ?? []
        where name.hasPrefix(".\(id).") && !name.hasPrefix(".\(id).json") {
            try FileManager.default.removeItem(atPath: "\(layout.deleted)/\(name)")
        }
        if erase { try eraseRecords(of: id) }
    }

    public func completeDeletion(_ tombstone: Tombstone) async throws {
        let outbox = layout.outbox
        if FileManager.default.fileExists(atPath: outbox.directory(.pending)) {
            outbox.withdraw(job: tombstone.id, why: "withdrawn: the video was deleted (\(tombstone.reason.code.rawValue)) before this was delivered")
            try outbox.record(tombstone.webhook)
        }
        try JSONFile.write(tombstone, to: layout.tombstone(tombstone.id))
        events.append("deletion_completed", tombstone.id, ["purged": tombstone.purge.count, "code": tombstone.reason.code.rawValue])
    }

    /// Erasure: the event log keeps of the job's lines only when and what (its names, paths and
    /// messages go), and the webhooks delivered or dead for it go.
    private func eraseRecords(of id: String) throws {
        for path in [layout.events, layout.events + ".1"] where FileManager.default.fileExists(atPath: path) {
            try EventLog(path: path).redact(id: id, keeping: ["time", "event", "id", "code"])
        }
        layout.outbox.forget(job: id)
    }
}
