import Foundation

/// JSON files of the spool and the job processes: written whole under a fresh name (created
/// exclusively, never through a link), fsynced, renamed into place, the directory fsynced.
public enum JSONFile {
    public static func write<T: Encodable>(_ value: T, to path: String) throws {
        let data = try JSONEncoder.ingestd.encode(value)
        let temporary = "\(path).tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        // Created exclusively and never through a link: a planted name cannot redirect the write.
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw IngestError.cannotWrite(path: temporary, reason: String(cString: strerror(errno))) }
        let written = data.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd) == 0
        close(fd)
        guard written == data.count, synced, rename(temporary, path) == 0 else {
            // A short write sets no errno: the file system had no room for the rest.
            let reason = String(cString: strerror(written >= 0 && written < data.count ? ENOSPC : errno))
            unlink(temporary)
            throw IngestError.cannotWrite(path: path, reason: reason)
        }
        try Durability.syncDirectory((path as NSString).deletingLastPathComponent)
    }

    /// The value in `path`, or nil when it is missing or unreadable for any reason.
    public static func read<T: Decodable>(_ type: T.Type, from path: String) -> T? {
        try? load(type, from: path)
    }

    /// The value in `path`; throws why it cannot be had (no such file, too many open files, not
    /// this type's JSON).
    public static func load<T: Decodable>(_ type: T.Type, from path: String) throws -> T {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        return try JSONDecoder.ingestd.decode(T.self, from: data)
    }
}
