import Foundation

/// Orders a deletion's tombstone with the ends and shows of attempts, which the job's own lock
/// cannot (a running attempt holds it): an `flock` on the spool's `deleted/` directory, taken
/// exclusively around the tombstone's link and shared around each end or show together with its
/// check of the tombstone. So an attempt that found no tombstone has put its video in view and
/// recorded its webhook before the deletion records one (the deletion then removes them), and one
/// that finds it publishes nothing.
struct DeletionFence {
    let layout: SpoolLayout

    func shared<T>(_ body: () async throws -> T) async throws -> T { try await held(LOCK_SH, body) }

    func exclusive<T>(_ body: () async throws -> T) async throws -> T { try await held(LOCK_EX, body) }

    private func held<T>(_ operation: Int32, _ body: () async throws -> T) async throws -> T {
        try? FileManager.default.createDirectory(atPath: layout.deleted, withIntermediateDirectories: true)
        let fd = open(layout.deleted, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw IngestError.cannotRead(path: layout.deleted, reason: String(cString: strerror(errno))) }
        defer { close(fd) }  // releases the lock
        while flock(fd, operation) != 0 {
            guard errno == EINTR else { throw IngestError.cannotRead(path: layout.deleted, reason: String(cString: strerror(errno))) }
        }
        return try await body()
    }
}
