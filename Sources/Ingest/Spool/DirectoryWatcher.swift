import Foundation

/// Watches a directory with inotify on a dedicated thread and keeps, per name, what the last
/// event says about it: renamed in (`IN_MOVED_TO`), closed after writing (`IN_CLOSE_WRITE`), or
/// being written (`IN_MODIFY` after its last close). Events are applied in the kernel's order, on
/// the watcher's thread, so a write after a close is never mistaken for a finished file.
/// When inotify is unavailable, ``isActive`` is false and the daemon relies on polling alone.
public final class DirectoryWatcher: @unchecked Sendable {
    public enum State: Sendable, Equatable {
        case renamedIn
        case closedAfterWriting
        case beingWritten
    }

    private let descriptor: Int32
    private let lock = NSLock()
    private var stopped = false
    private var states: [String: State] = [:]
    public let isActive: Bool

    /// `onChange` is called (on the watcher's thread) after a batch of events in which some name
    /// was renamed in or closed after writing (a write alone cannot complete anything).
    public init(directory: String, onChange: @escaping @Sendable () -> Void) {
        let fd = inotify_init1(Int32(IN_CLOEXEC))
        descriptor = fd
        isActive = fd >= 0 && inotify_add_watch(fd, directory, UInt32(IN_MOVED_TO | IN_CLOSE_WRITE | IN_MODIFY)) >= 0
        guard isActive else { return }
        let thread = Thread { [self] in loop(onChange) }
        thread.name = "ingestd.inotify"
        thread.start()
    }

    public func stop() {
        lock.lock()
        stopped = true
        lock.unlock()
    }

    /// What the latest event said about `name` (names as ``Spool/Arrival/name``), nil if none.
    public func state(of name: String) -> State? {
        lock.lock()
        defer { lock.unlock() }
        return states[name]
    }

    /// Drops what is known about names no longer in the directory.
    public func keep(only names: Set<String>) {
        lock.lock()
        states = states.filter { names.contains($0.key) }
        lock.unlock()
    }

    private var isStopped: Bool {
        lock.lock()
        defer { lock.unlock() }
        return stopped
    }

    private func loop(_ onChange: @Sendable () -> Void) {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while !isStopped {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 500) > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { continue }
            var offset = 0, completing = false
            lock.lock()
            while offset + 16 <= count {
                let mask = buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self) }
                let length = buffer.withUnsafeBytes { Int($0.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self)) }
                let nameBytes = buffer[(offset + 16)..<min(count, offset + 16 + length)].prefix { $0 != 0 }
                if !nameBytes.isEmpty {
                    let name = String(decoding: nameBytes, as: UTF8.self).replacingOccurrences(of: "\u{FFFD}", with: "_")
                    if mask & UInt32(IN_MOVED_TO) != 0 {
                        states[name] = .renamedIn
                        completing = true
                    } else if mask & UInt32(IN_CLOSE_WRITE) != 0 {
                        if states[name] != .renamedIn { states[name] = .closedAfterWriting }
                        completing = true
                    } else if mask & UInt32(IN_MODIFY) != 0 {
                        states[name] = .beingWritten
                    }
                }
                offset += 16 + length
            }
            lock.unlock()
            if completing { onChange() }
        }
        close(descriptor)
    }
}
