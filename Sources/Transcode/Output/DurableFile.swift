import Foundation

/// Files written whole and durably, safe in a directory another process may write (a job
/// process's output, which its worker reads and points to): a planted symbolic link is never
/// followed, neither for reading nor for writing.
public enum DurableFile {
    /// Replaces `path` with `data`: a temporary `.NAME.partial` beside it, created afresh (one left
    /// there, link or file, is removed first), written, fsynced, renamed over `path`, and the
    /// directory fsynced. A reader sees the old file or the new one, whole.
    public static func replace(_ path: String, with data: Data) throws {
        let result = data.withUnsafeBytes { write(path, $0) }
        guard result == 0 else { throw TranscodeError.writeFailed(path, errno: -result) }
    }

    /// The bytes of the regular file `path` (never through a link), at most `limit` of them.
    public static func read(_ path: String, limit: Int) throws -> Data {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw TranscodeError.outputFailed(path: path, reason: String(cString: strerror(errno))) }
        let handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, Int(info.st_size) <= limit else {
            throw TranscodeError.outputFailed(path: path, reason: "not a regular file of at most \(limit) bytes")
        }
        return try handle.read(upToCount: limit) ?? Data()
    }

    /// Writes `data` as `path`, durably; returns 0 or a negative errno (FFmpeg's `AVERROR`).
    static func write(_ path: String, _ data: UnsafeRawBufferPointer) -> Int32 {
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().path
        let temporary = "\(directory)/.\(url.lastPathComponent).partial"
        unlink(temporary)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return -errno }
        func failed() -> Int32 {
            let code = errno
            close(fd)
            unlink(temporary)
            return -code
        }
        var offset = 0
        while offset < data.count {
            let count = Glibc.write(fd, data.baseAddress! + offset, data.count - offset)
            if count < 0 {
                if errno == EINTR { continue }
                return failed()
            }
            offset += count
        }
        guard fsync(fd) == 0 else { return failed() }
        close(fd)
        guard rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            return -code
        }
        let directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryFD >= 0 {
            defer { close(directoryFD) }
            guard fsync(directoryFD) == 0 else { return -errno }
        }
        return 0
    }
}
