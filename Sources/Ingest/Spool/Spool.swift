import Foundation
import Transcode

/// Moves uploads through the spool's states. All transitions are renames within one filesystem,
/// each followed by an fsync of the directories it changed.
public struct Spool: Sendable {
    public let layout: SpoolLayout

    public init(layout: SpoolLayout) { self.layout = layout }

    /// One visible entry of `incoming/` (hidden names, e.g. `.clip.mp4.part`, are uploads in progress).
    public struct Arrival: Sendable, Equatable {
        /// The name for display and ids (invalid UTF-8 replaced).
        public var name: String
        /// The name's bytes as stored, which need not be UTF-8; the upload keeps them.
        public var rawName: [UInt8]
        public var isDirectory: Bool
        /// Neither a regular file nor a directory (a link, a FIFO, a device): nothing is written
        /// to it, so it is complete once it has settled (and will be refused).
        public var isSpecial: Bool
        public var size: Int64
        /// The latest modification in the upload (for a directory: anywhere in its tree).
        public var modified: Date
        /// Files in the upload (1 for a file).
        public var files: Int
        /// For a directory: whether `upload.json` is there yet.
        public var hasManifest: Bool
    }

    /// Lists `incoming/` with raw names (readdir), so names that are not UTF-8 are still handled.
    public func arrivals() -> [Arrival] {
        guard let directory = opendir(layout.incoming) else { return [] }
        defer { closedir(directory) }
        var found: [Arrival] = []
        while let entry = readdir(directory) {
            let raw = withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix { $0 != 0 }) }
            guard let first = raw.first, first != UInt8(ascii: ".") else { continue }
            let path = RawPath(layout.incoming, raw)
            guard let info = path.lstat() else { continue }
            let isDirectory = (info.st_mode & S_IFMT) == S_IFDIR
            let name = String(decoding: raw, as: UTF8.self).replacingOccurrences(of: "\u{FFFD}", with: "_")
            var tree = Tree(bytes: Int64(info.st_size), files: 1, modified: info.st_mtim)
            if isDirectory { tree = Self.tree(path) }
            found.append(Arrival(name: name, rawName: raw, isDirectory: isDirectory,
                                 isSpecial: !isDirectory && (info.st_mode & S_IFMT) != S_IFREG, size: tree.bytes,
                                 modified: Date(timeIntervalSince1970: TimeInterval(tree.modified.tv_sec) + TimeInterval(tree.modified.tv_nsec) / 1e9),
                                 files: tree.files,
                                 hasManifest: isDirectory && path.appending(Array(Upload.manifestName.utf8)).lstat() != nil))
        }
        return found.sorted { $0.rawName.lexicographicallyPrecedes($1.rawName) }
    }

    /// ``Tree/bytes`` of a directory with more entries than a walk may visit.
    static let tooManyFiles = Int64.max

    /// Most entries a walk of an arrival visits (whatever the preset, which the spool's scan
    /// does not know): a hostile upload cannot make every poll walk a huge tree. Uploads are
    /// refused by ``Admission/maxUploadFiles``, far below.
    static let walkBound = 1000

    struct Tree {
        var bytes: Int64
        var files: Int
        var modified: timespec
    }

    /// Bytes, entries and latest mtime under `root` (links not followed, raw names), or
    /// ``tooManyFiles`` bytes once it holds more than `atMost` entries.
    static func tree(_ root: RawPath, atMost: Int = walkBound) -> Tree {
        var tree = Tree(bytes: 0, files: 0, modified: root.lstat()?.st_mtim ?? timespec())
        var pending = [root]
        while let directory = pending.popLast() {
            guard let listing = opendir(directory.bytes) else { continue }
            defer { closedir(listing) }
            while let entry = readdir(listing) {
                let raw = withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix { $0 != 0 }) }
                guard raw != [0x2e], raw != [0x2e, 0x2e] else { continue }
                tree.files += 1
                guard tree.files <= atMost else { return Tree(bytes: tooManyFiles, files: tree.files, modified: tree.modified) }
                let child = directory.appending(raw)
                guard let info = child.lstat() else { continue }
                tree.bytes += Int64(info.st_size)
                if (info.st_mtim.tv_sec, info.st_mtim.tv_nsec) > (tree.modified.tv_sec, tree.modified.tv_nsec) { tree.modified = info.st_mtim }
                if info.st_mode & S_IFMT == S_IFDIR { pending.append(child) }
            }
        }
        return tree
    }

    /// An id no state directory and no CDN entry (published or staging) uses yet.
    func uniqueID(for name: String, cdn: String?) -> String {
        while true {
            let id = JobID.make(for: name)
            let places = SpoolLayout.State.allCases.map { layout.job(id, in: $0) } + [layout.tombstone(id)] + (cdn.map { ["\($0)/\(id)"] } ?? [])
            var info = stat()
            if places.allSatisfy({ lstat($0, &info) != 0 }) { return id }
        }
    }

    /// Claims an arrival. The job directory is made and locked under a hidden name, then renamed
    /// into `work/` (so no other daemon ever sees it unlocked), then the upload is moved into
    /// its `upload/` directory under the name it arrived with (one rename, so only one daemon
    /// wins) and the job record is written beside it. Returns nil when another process took the
    /// upload first. `cdn` is where jobs publish: ids never reuse a name there.
    public func claim(_ arrival: Arrival, cdn: String?) throws -> (JobRecord, JobLock)? {
        let id = uniqueID(for: arrival.name, cdn: cdn)
        let work = layout.directory(.work)
        let hidden = "\(work)/.claim-\(id)"
        guard mkdir(hidden, 0o755) == 0 else { throw IngestError.cannotWrite(path: hidden, reason: String(cString: strerror(errno))) }
        guard let lock = JobLock(directory: hidden), mkdir("\(hidden)/upload", 0o755) == 0 else {
            try? FileManager.default.removeItem(atPath: hidden)
            throw IngestError.cannotWrite(path: hidden, reason: String(cString: strerror(errno)))
        }
        let directory = layout.job(id)
        guard rename(hidden, directory) == 0 else {
            try? FileManager.default.removeItem(atPath: hidden)
            throw IngestError.cannotWrite(path: directory, reason: String(cString: strerror(errno)))
        }
        let source = RawPath(layout.incoming, arrival.rawName)
        let target = RawPath(layout.upload(id), arrival.rawName)
        guard rename(source.bytes, target.bytes) == 0 else {
            try? FileManager.default.removeItem(atPath: directory)  // still ours: we hold its lock
            return nil
        }
        let record = JobRecord(id: id, original: arrival.name, receivedAt: Date(), attempts: 0)
        try JSONFile.write(record, to: "\(directory)/job.json")
        for changed in [layout.incoming, layout.upload(id), directory, work] { try Durability.syncDirectory(changed) }
        return (record, lock)
    }

    /// Takes over jobs in `work/` that no live process holds (left by a daemon that died, or
    /// waiting for a retry) and are due by `now`, at most `limit` of them. Each job's lock is
    /// taken before anything in it is read or repaired, so two daemons never repair or run one
    /// job together; what a crash in the middle of a claim left behind is repaired or removed.
    public func adoptOrphans(limit: Int, now: Date = Date()) -> [(JobRecord, JobLock)] {
        let work = layout.directory(.work)
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: work)) ?? []).sorted()
        var adopted: [(JobRecord, JobLock)] = []
        for name in names where adopted.count < limit {
            let directory = "\(work)/\(name)"
            guard !layout.isDeleted(name) else { continue }  // never runs: its deletion removes it
            guard let lock = JobLock(directory: directory) else { continue }  // a live process has it
            if name.hasPrefix(".claim-") {
                // Died before the claim became visible: nothing was moved in yet.
                try? FileManager.default.removeItem(atPath: directory)
                continue
            }
            guard !name.hasPrefix("."), let record = repair(id: name) else { continue }
            guard (record.notBefore ?? now) <= now else { continue }  // lock released on return
            adopted.append((record, lock))
        }
        return adopted
    }

    /// The record of a job whose lock we hold, rebuilt when a crash left it incomplete; nil (and
    /// the directory removed) when the crash came before the upload was moved in.
    private func repair(id: String) -> JobRecord? {
        let directory = layout.job(id)
        let upload = layout.upload(id)
        let record = JSONFile.read(JobRecord.self, from: "\(directory)/job.json")
        if let entry = RawPath.entries(of: upload).first {
            if let record { return record }
            let rebuilt = Self.record(id: id, entry: entry)
            try? JSONFile.write(rebuilt, to: "\(directory)/job.json")
            return rebuilt
        }
        try? FileManager.default.removeItem(atPath: directory)
        return nil
    }

    /// Queues a job whose directory was made ready on the spool's file system (the input the
    /// sole entry of `<dir>/upload`, as the upload server leaves a complete upload): its record
    /// is written first, then the directory is renamed into `work/<id>`, so it appears whole.
    /// Returns false when a job of that id exists already, or was deleted (nothing changes). The spool runs
    /// every job with its daemon's preset.
    @discardableResult
    public func admit(_ job: NewJob) throws -> Bool {
        guard UploadManifest.isValidID(job.id) else {
            throw IngestError.cannotWrite(path: layout.directory(.work), reason: "\(job.id.debugDescription) cannot name a job")
        }
        guard case .soleEntry(let holder) = job.input, let entry = RawPath.entries(of: holder).first else {
            throw IngestError.cannotRead(path: job.input.description, reason: "not a job directory made ready for the spool (<dir>/upload/<entry>)")
        }
        let prepared = URL(fileURLWithPath: holder).deletingLastPathComponent().path
        var info = stat()
        guard SpoolLayout.State.allCases.allSatisfy({ lstat(layout.job(job.id, in: $0), &info) != 0 }),
              !layout.isDeleted(job.id) else { return false }
        var record = Self.record(id: job.id, entry: entry)
        record.playback = job.playback
        try JSONFile.write(record, to: "\(prepared)/job.json")
        try Durability.syncDirectory(prepared)
        guard rename(prepared, layout.job(job.id)) == 0 else {
            throw IngestError.cannotWrite(path: layout.job(job.id), reason: String(cString: strerror(errno)))
        }
        try Durability.syncDirectory(layout.directory(.work))
        return true
    }

    /// The first record of job `id`, whose upload arrived as `entry` (raw bytes; a name that is
    /// not UTF-8 is recorded with `_` for what cannot be read).
    static func record(id: String, entry: [UInt8]) -> JobRecord {
        let name = String(decoding: entry, as: UTF8.self).replacingOccurrences(of: "\u{FFFD}", with: "_")
        return JobRecord(id: id, original: name, receivedAt: Date(), attempts: 0)
    }

    /// Records `record` (attempts, backoff) in its job directory.
    public func update(_ record: JobRecord) throws {
        try JSONFile.write(record, to: "\(layout.job(record.id))/job.json")
    }

    /// Ends a job: writes `reason.json` (for rejected/failed) and renames `work/<id>` into `state`.
    /// The upload itself is never touched: only the job's own files are written or removed.
    public func finish(_ record: JobRecord, as state: SpoolLayout.State, reason: Reason? = nil) throws {
        let directory = layout.job(record.id)
        if let reason { try JSONFile.write(reason, to: "\(directory)/reason.json") }
        try? FileManager.default.removeItem(atPath: "\(directory)/progress.json")
        try? FileManager.default.removeItem(atPath: "\(directory)/result.json")
        guard rename(directory, layout.job(record.id, in: state)) == 0 else {
            throw IngestError.cannotWrite(path: layout.job(record.id, in: state), reason: String(cString: strerror(errno)))
        }
        try Durability.syncDirectory(layout.directory(state))
        try Durability.syncDirectory(layout.directory(.work))
    }
}
