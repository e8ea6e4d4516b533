import Foundation

/// The append-only `events.ndjson`: one JSON object per line, written with `O_APPEND` so lines
/// from several processes never interleave. Past `maxBytes` it is rotated to `events.ndjson.1`
/// (the previous `.1` is dropped), so a long-running daemon does not fill the disk.
public struct EventLog: Sendable {
    public let path: String
    public let maxBytes: Int

    public init(path: String, maxBytes: Int = 64 << 20) {
        self.path = path
        self.maxBytes = maxBytes
    }

    /// Appends `{"time": …, "event": name, "id": id, …fields}`.
    public func append(_ event: String, _ id: String? = nil, _ fields: [String: any Sendable] = [:]) {
        var object: [String: Any] = ["time": ISO8601DateFormatter().string(from: Date()), "event": event]
        if let id { object["id"] = id }
        for (key, value) in fields { object[key] = value }
        guard var line = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else { return }
        line.append(0x0a)
        var fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return }
        if rotateIfFull(fd) {
            close(fd)
            fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
            guard fd >= 0 else { return }
        }
        defer { close(fd) }
        _ = line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    }

    /// Renames the full log aside. The lock and the inode check make it happen once even when
    /// several processes append: whoever finds the path already replaced leaves it alone.
    private func rotateIfFull(_ fd: Int32) -> Bool {
        var open = stat()
        guard fstat(fd, &open) == 0, open.st_size >= maxBytes else { return false }
        flock(fd, LOCK_EX)
        defer { flock(fd, LOCK_UN) }
        var current = stat()
        guard stat(path, &current) == 0, current.st_ino == open.st_ino else { return true }
        return rename(path, path + ".1") == 0
    }

    /// Erasure: rewrites the log with job `id`'s lines cut to the fields `keeping`. Lines
    /// appended while it is rewritten are carried over before the rewrite takes the log's place.
    public func redact(id: String, keeping: Set<String>) throws {
        let temporary = "\(path).redact-\(getpid())"
        var done = 0
        var kept = Data()
        while true {
            guard let handle = FileHandle(forReadingAtPath: path) else { return }
            try handle.seek(toOffset: UInt64(done))
            let more = try handle.readToEnd() ?? Data()
            try handle.close()
            if more.isEmpty, done > 0 { break }
            for line in more.split(separator: 0x0a, omittingEmptySubsequences: true) {
                kept.append(Self.redacted(Data(line), id: id, keeping: keeping))
                kept.append(0x0a)
            }
            done += more.count
            if more.isEmpty { break }
        }
        try kept.write(to: URL(fileURLWithPath: temporary))
        guard rename(temporary, path) == 0 else { throw IngestError.cannotWrite(path: path, reason: String(cString: strerror(errno))) }
    }

    /// `line` cut to `keeping` when it is job `id`'s, else as it was.
    static func redacted(_ line: Data, id: String, keeping: Set<String>) -> Data {
        guard let object = try? JSONSerialization.jsonObject(with: line) as? [String: Any], object["id"] as? String == id,
              let cut = try? JSONSerialization.data(withJSONObject: object.filter { keeping.contains($0.key) },
                                                    options: [.sortedKeys, .withoutEscapingSlashes]) else { return line }
        return cut
    }
}
