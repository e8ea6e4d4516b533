import Foundation

/// Watches a directory with inotify on a dedicated thread and reports names that arrived
/// complete: renamed in (`IN_MOVED_TO`) or closed after writing (`IN_CLOSE_WRITE`).
/// When inotify is unavailable, ``isActive`` is false and the daemon relies on polling alone.
public final class DirectoryWatcher: @unchecked Sendable {
    private let descriptor: Int32
    private let lock = NSLock()
    private var stopped = false
    public let isActive: Bool

    /// `onArrival` gets the name and whether it was renamed in (rather than closed after writing).
    public init(directory: String, onArrival: @escaping @Sendable (String, Bool) -> Void) {
        let fd = inotify_init1(Int32(IN_CLOEXEC))
        descriptor = fd
        isActive = fd >= 0 && inotify_add_watch(fd, directory, UInt32(IN_MOVED_TO | IN_CLOSE_WRITE)) >= 0
        guard isActive else { return }
        let thread = Thread { [self] in loop(onArrival) }
        thread.name = "ingestd.inotify"
        thread.start()
    }

    public func stop() {
        lock.lock()
        stopped = true
        lock.unlock()
    }

    private var isStopped: Bool {
        lock.lock()
        defer { lock.unlock() }
        return stopped
    }

    private func loop(_ onArrival: @Sendable (String, Bool) -> Void) {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while !isStopped {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 500) > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { continue }
            var offset = 0
            while offset + 16 <= count {
                let mask = buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self) }
                let length = buffer.withUnsafeBytes { Int($0.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self)) }
                let nameBytes = buffer[(offset + 16)..<min(count, offset + 16 + length)].prefix { $0 != 0 }
                if !nameBytes.isEmpty {
                    let name = String(decoding: nameBytes, as: UTF8.self).replacingOccurrences(of: "\u{FFFD}", with: "_")
                    onArrival(name, mask & UInt32(IN_MOVED_TO) != 0)
                }
                offset += 16 + length
            }
        }
        close(descriptor)
    }
}
