import Foundation

/// One input file of an upload, opened once by descriptor and read only through it.
///
/// The descriptor is opened with `O_NOFOLLOW` and checked with `fstat` to be a regular file, and
/// its size is fixed at that moment: the file validated is the file probed and decoded, whatever
/// happens to its name afterwards (a swap for a symlink or a FIFO), and nothing appended later is
/// read. Closed exactly once, when the last reference goes.
public final class SourceFile: Sendable {
    /// The name used in messages (not used to open anything).
    public let path: String
    /// Size in bytes when the file was opened; reads stop there.
    public let size: Int64
    let descriptor: Int32

    /// Adopts `descriptor` (closing it on failure): it must be a regular file.
    public init(adopting descriptor: Int32, path: String) throws {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw TranscodeError.cannotOpen(path: path, reason: reason)
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            close(descriptor)
            throw TranscodeError.cannotOpen(path: path, reason: "not a regular file")
        }
        // Opened non-blocking so that a FIFO cannot stall the open; reads of a file block as usual.
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
        self.descriptor = descriptor
        self.path = path
        size = Int64(info.st_size)
    }

    /// Opens `path` (its last component must not be a symbolic link).
    public convenience init(path: String) throws {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { throw TranscodeError.cannotOpen(path: path, reason: SourceFile.openFailure(errno)) }
        try self.init(adopting: descriptor, path: path)
    }

    deinit { close(descriptor) }

    /// The whole file (its first ``size`` bytes), or nil when it cannot be read.
    public func contents() -> Data? {
        var data = Data(count: Int(size))
        var done = 0
        while done < data.count {
            let count = data.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress! + done, $0.count - done, off_t(done)) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return nil }
            done += count
        }
        return data
    }

    /// Why `open` failed, in words an uploader understands.
    public static func openFailure(_ code: Int32) -> String {
        code == ELOOP ? "a symbolic link (not followed)" : String(cString: strerror(code))
    }
}
