import Foundation

/// Moves uploads through the spool's states. All transitions are renames within one filesystem.
public struct Spool: Sendable {
    public let layout: SpoolLayout

    public init(layout: SpoolLayout) { self.layout = layout }

    /// One visible entry of `incoming/` (hidden names, e.g. `.clip.mp4.part`, are uploads in progress).
    public struct Arrival: Sendable, Equatable {
        /// The name for display and ids (invalid UTF-8 replaced).
        public var name: String
        /// The name's bytes as stored, which need not be UTF-8.
        public var rawName: [UInt8]
        public var isDirectory: Bool
        public var size: Int64
        public var modified: Date
    }

    /// Lists `incoming/` with raw names (readdir), so names that are not UTF-8 are still handled.
    public func arrivals() -> [Arrival] {
        guard let directory = opendir(layout.incoming) else { return [] }
        defer { closedir(directory) }
        var found: [Arrival] = []
        while let entry = readdir(directory) {
            let raw = withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix { $0 != 0 }) }
            guard let first = raw.first, first != UInt8(ascii: ".") else { continue }
            let path = Self.path(layout.incoming, raw)
            var info = stat()
            guard lstat(path, &info) == 0 else { continue }
            let isDirectory = (info.st_mode & S_IFMT) == S_IFDIR
            let name = String(decoding: raw, as: UTF8.self).replacingOccurrences(of: "\u{FFFD}", with: "_")
            found.append(Arrival(name: name, rawName: raw, isDirectory: isDirectory,
                                 size: isDirectory ? Self.treeSize(String(decoding: path.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)) : Int64(info.st_size),
                                 modified: Date(timeIntervalSince1970: TimeInterval(info.st_mtim.tv_sec))))
        }
        return found.sorted { $0.rawName.lexicographicallyPrecedes($1.rawName) }
    }

    /// `directory/raw` as a C path, keeping the raw bytes of the name.
    static func path(_ directory: String, _ raw: [UInt8]) -> [CChar] {
        (Array(directory.utf8) + [UInt8(ascii: "/")] + raw + [0]).map { CChar(bitPattern: $0) }
    }

    /// Most entries one upload directory may hold.
    static let maxUploadFiles = 1000
    /// ``treeSize(_:)`` of a directory with more than ``maxUploadFiles`` entries.
    static let tooManyFiles = Int64.max

    /// Bytes under `path` (links not followed), or ``tooManyFiles`` once it holds more than
    /// ``maxUploadFiles`` entries: a hostile upload cannot make every poll walk a huge tree.
    static func treeSize(_ path: String) -> Int64 {
        var total: Int64 = 0, count = 0
        for case let relative as String in FileManager.default.enumerator(atPath: path) ?? FileManager.DirectoryEnumerator() {
            count += 1
            if count > maxUploadFiles { return tooManyFiles }
            var info = stat()
            if lstat("\(path)/\(relative)", &info) == 0 { total += Int64(info.st_size) }
        }
        return total
    }

    /// A job id from an upload name: its safe characters plus a random suffix, so equal names
    /// never collide and no name can escape the spool.
    public static func makeID(for name: String) -> String {
        let trimmed = safeIdentifier((name as NSString).deletingPathExtension)
            .trimmingCharacters(in: CharacterSet(charactersIn: "_")).prefix(40)
        let suffix = String(format: "%08x", UInt32.random(in: 0...UInt32.max))
        return (trimmed.isEmpty ? "upload" : String(trimmed)) + "-" + suffix
    }

    /// Claims an arrival: creates and locks `work/<id>/`, then moves the upload in (one rename,
    /// so only one daemon wins) and writes its job record. Returns nil when another process
    /// took the upload first.
    public func claim(_ arrival: Arrival) throws -> (JobRecord, JobLock)? {
        let id = Self.makeID(for: arrival.name)
        let directory = layout.job(id)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        guard let lock = JobLock(directory: directory) else { return nil }
        let original = Self.originalName(arrival.name)
        guard rename(Self.path(layout.incoming, arrival.rawName), "\(directory)/\(original)") == 0 else {
            try? FileManager.default.removeItem(atPath: directory)
            return nil
        }
        let record = JobRecord(id: id, original: original, receivedAt: Date(), attempts: 0)
        try JSONFile.write(record, to: "\(directory)/job.json")
        try Durability.syncDirectory(layout.directory(.work))
        return (record, lock)
    }

    /// `s` with every character other than ASCII letters and digits replaced by `_`.
    static func safeIdentifier(_ s: String) -> String {
        String(s.unicodeScalars.map { $0.isASCII && CharacterSet.alphanumerics.contains($0) ? Character($0) : "_" })
    }

    /// The name the original keeps inside its job directory (control characters replaced).
    static func originalName(_ name: String) -> String {
        let cleaned = String(name.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7f ? "_" : Character($0) })
        return cleaned == "job.json" || cleaned == "reason.json" || cleaned.hasPrefix(".") ? "upload-\(cleaned)" : cleaned
    }

    /// Jobs in `work/` that no live process holds: left by a daemon that died, or queued for retry.
    /// Repairs what a crash between two steps of a claim can leave behind.
    public func orphans() -> [JobRecord] {
        let ids = (try? FileManager.default.contentsOfDirectory(atPath: layout.directory(.work))) ?? []
        return ids.sorted().compactMap { id in
            let directory = layout.job(id)
            guard !JobLock.isHeld(directory: directory) else { return nil }
            if let record = JSONFile.read(JobRecord.self, from: "\(directory)/job.json") { return record }
            // Died between the rename and the job record: rebuild it from the original.
            let contents = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [])
                .filter { !$0.hasPrefix(".") && !$0.hasSuffix(".json") && !$0.contains(".json.tmp-") }
            guard let original = contents.first else {
                // Died between mkdir and rename: nothing was moved in.
                try? FileManager.default.removeItem(atPath: directory)
                return nil
            }
            let record = JobRecord(id: id, original: original, receivedAt: Date(), attempts: 0)
            try? JSONFile.write(record, to: "\(directory)/job.json")
            return record
        }
    }

    /// Records `record` (attempts, backoff) in its job directory.
    public func update(_ record: JobRecord) throws {
        try JSONFile.write(record, to: "\(layout.job(record.id))/job.json")
    }

    /// Ends a job: writes `reason.json` (for rejected/failed) and renames `work/<id>` into `state`.
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
