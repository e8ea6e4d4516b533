import Foundation

/// An exclusive `flock` on a job directory. It dies with its process, so a job whose daemon was
/// killed can be taken over, while two live daemons never work on the same job.
public final class JobLock: @unchecked Sendable {
    private var descriptor: Int32

    /// Takes the lock, or returns nil when another process holds it.
    public init?(directory: String) {
        let fd = open("\(directory)/.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return nil }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            close(fd)
            return nil
        }
        descriptor = fd
    }

    deinit { release() }

    public func release() {
        guard descriptor >= 0 else { return }
        flock(descriptor, LOCK_UN)
        close(descriptor)
        descriptor = -1
    }

    /// Whether some process holds the lock of `directory` right now.
    public static func isHeld(directory: String) -> Bool {
        let fd = open("\(directory)/.lock", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        if flock(fd, LOCK_SH | LOCK_NB) == 0 {
            flock(fd, LOCK_UN)
            return false
        }
        return true
    }
}
