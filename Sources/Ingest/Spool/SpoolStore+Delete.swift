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
        guard lstat(layout.job(id, in: .queued), &info) != 0 else {
            throw DeletionRefused("\(id) was handed to the fleet's job queue (watch --database): delete it with --database, where its job is")
        }
        try FileManager.default.createDirectory(atPath: layout.deleted, withIntermediateDirectories: true)
        let tombstone = Tombstone(id: id, reason: reason, at: at)
        // Written aside, then linked into place: of two deletes at once, one records and the other finds it.
        let aside = "\(layout.deleted)/.\(id).json.new-\(getpid())"
        try JSONFile.write(tombstone, to: aside)
        defer { unlink(aside) }
        let linked = try await DeletionFence(layout: layout).exclusive { () async throws -> Bool in
            guard link(aside, layout.tombstone(id)) == 0 else {
                guard errno == EEXIST else { throw IngestError.cannotWrite(path: layout.tombstone(id), reason: String(cString: strerror(errno))) }
                return false
            }
            try Durability.syncDirectory(layout.deleted)
            return true
        }
        guard linked else { return .earlier(try JSONFile.load(Tombstone.self, from: layout.tombstone(id))) }
        events.append("deleted", id, ["code": reason.code.rawValue, "reason": reason.text, "by": reason.by])
        withdrawWebhooks(tombstone)
        return .recorded(tombstone)
    }

    /// The video's webhooks not yet sent go to `dead/`: they would name files that are gone.
    private func withdrawWebhooks(_ tombstone: Tombstone) {
        guard FileManager.default.fileExists(atPath: layout.outbox.directory(.pending)) else { return }
        layout.outbox.withdraw(job: tombstone.id, why: "withdrawn: the video was deleted (\(tombstone.reason.code.rawValue)) before this was delivered")
    }

    public func tombstone(_ id: String) async throws -> Tombstone? {
        guard UploadManifest.isValidID(id), layout.isDeleted(id) else { return nil }
        return try JSONFile.load(Tombstone.self, from: layout.tombstone(id))
    }

    public func pendingDeletions() async throws -> [Tombstone] { allTombstones().filter { $0.completedAt == nil } }

    public func tombstones(limit: Int) async throws -> [Tombstone] {
        Array(allTombstones().sorted { ($0.at, $0.id) > ($1.at, $1.id) }.prefix(limit))
    }

    public func deletionCounts() async throws -> [DeletionCode: Int] {
        allTombstones().reduce(into: [:]) { $0[$1.reason.code, default: 0] += 1 }
    }

    private func allTombstones() -> [Tombstone] {
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
        try removeAside(id)  // a pass cut short left them
        for (folder, name) in folders where FileManager.default.fileExists(atPath: folder) {
            guard let lock = JobLock(directory: folder) else { throw IngestError.cannotWrite(path: folder, reason: "a process holds it; retried later") }
            let aside = Self.aside(layout, id, name)
            guard rename(folder, aside) == 0 else {
                throw IngestError.cannotWrite(path: folder, reason: String(cString: strerror(errno)))
            }
            lock.release()
            try Durability.syncDirectory((folder as NSString).deletingLastPathComponent)
        }
        try removeAside(id)
        // A folder made meanwhile (an upload's completion or a retry that checked before the
        // tombstone): not complete yet; the next pass removes it.
        if let late = folders.first(where: { FileManager.default.fileExists(atPath: $0.0) }) {
            throw IngestError.cannotWrite(path: late.0, reason: "made while the deletion ran; removed by its next pass")
        }
        if erase {
            for path in [layout.events, layout.events + ".1"] where FileManager.default.fileExists(atPath: path) {
                try EventLog(path: path).redact(id: id, keeping: ["time", "event", "id", "code"])
            }
        }
    }

    /// Where job `id`'s folder `name` (a state, or `uploading`) is renamed before it is removed.
    static func aside(_ layout: SpoolLayout, _ id: String, _ name: String) -> String { "\(layout.deleted)/.\(id).aside-\(name)" }

    /// Removes the folders of job `id` renamed aside into `deleted/`.
    private func removeAside(_ id: String) throws {
        for name in SpoolLayout.State.allCases.map(\.rawValue) + ["uploading"] where FileManager.default.fileExists(atPath: Self.aside(layout, id, name)) {
            try FileManager.default.removeItem(atPath: Self.aside(layout, id, name))
        }
    }

    /// Erasure: the webhooks delivered or dead for it go too (what they said of the person's files).
    public func completeDeletion(_ tombstone: Tombstone) async throws {
        guard try await self.tombstone(tombstone.id)?.completedAt == nil else { return }  // completed by another pass meanwhile
        if FileManager.default.fileExists(atPath: layout.outbox.directory(.pending)) {
            withdrawWebhooks(tombstone)
            if tombstone.reason.code == .erasure { layout.outbox.forget(job: tombstone.id) }
            try layout.outbox.record(tombstone.webhook)
        }
        try JSONFile.write(tombstone, to: layout.tombstone(tombstone.id))
        events.append("deletion_completed", tombstone.id, ["purged": tombstone.purge.count, "code": tombstone.reason.code.rawValue])
    }
}
