import Foundation

/// Watches a directory with inotify on a dedicated thread and keeps, per name, what the last
/// event says about it: made in place (`IN_CREATE`), renamed in (`IN_MOVED_TO`), closed after
/// writing (`IN_CLOSE_WRITE`), or being written (`IN_MODIFY` after its last close). Events are
/// applied in the kernel's order, on the watcher's thread, so a write after a close is never
/// mistaken for a finished file.
///
/// What it knows is a hint, never the only way in: a name it has nothing on (an event lost to a
/// queue overflow, or not read yet) is found by the owner's next listing of the directory.
/// When the kernel's queue overflows (`IN_Q_OVERFLOW`) everything known is dropped, since any of
/// it may be stale, and ``Mark/overflows`` counts up so the owner can tell.
/// When inotify is unavailable, ``isActive`` is false and the daemon relies on polling alone.
public final class DirectoryWatcher: @unchecked Sendable {
    public enum State: Sendable, Equatable {
        /// Made in place (a file created or a directory made there), nothing written yet.
        case created
        case renamedIn
        case closedAfterWriting
        case beingWritten
    }

    /// How far the watcher had got: taken before listing the directory, so that
    /// ``keep(only:listedAfter:)`` drops nothing it learned while the listing ran.
    public struct Mark: Sendable, Equatable {
        /// Events applied so far.
        public var events: UInt64
        /// Queue overflows seen so far.
        public var overflows: Int
        /// Events were queued that it had not applied yet (in the kernel's queue, or read and
        /// not applied): a name it has nothing on may be in them, an overflow too.
        public var behind: Bool
    }

    private let descriptor: Int32
    private let lock = NSLock()
    private var stopped = false
    /// The last event's state per name, and that event's number.
    private var states: [String: (state: State, event: UInt64)] = [:]
    private var applied: UInt64 = 0
    private var overflows = 0
    /// A batch is read and not applied yet.
    private var reading = false
    public let isActive: Bool

    /// `onChange` is called (on the watcher's thread) after a batch of events in which some name
    /// was renamed in or closed after writing (a write alone cannot complete anything), or the
    /// queue overflowed.
    public init(directory: String, onChange: @escaping @Sendable () -> Void) {
        let fd = inotify_init1(Int32(IN_CLOEXEC))
        descriptor = fd
        isActive = fd >= 0 && inotify_add_watch(fd, directory, UInt32(IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE | IN_MODIFY)) >= 0
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
        return states[name]?.state
    }

    public func mark() -> Mark {
        lock.lock()
        defer { lock.unlock() }
        return Mark(events: applied, overflows: overflows, behind: reading || queuedBytes > 0)
    }

    /// Bytes of events in the kernel's queue, not read yet.
    private var queuedBytes: Int32 {
        var bytes: Int32 = 0
        return withUnsafeMutablePointer(to: &bytes) { ioctl(descriptor, UInt(FIONREAD), $0) } == 0 ? bytes : 0
    }

    /// Drops what is known about names missing from a listing taken after `mark`. A name whose
    /// latest event came after the mark arrived while the listing ran: it is kept.
    public func keep(only names: Set<String>, listedAfter mark: Mark) {
        lock.lock()
        states = states.filter { names.contains($0.key) || $0.value.event > mark.events }
        lock.unlock()
    }

    /// Drops what is known about every name (for an owner that only wants the wake-ups).
    public func forgetAll() {
        lock.lock()
        states = [:]
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
            lock.lock()
            reading = true
            lock.unlock()
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            var offset = 0, completing = false
            lock.lock()
            while offset + 16 <= count {
                let mask = buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self) }
                let length = buffer.withUnsafeBytes { Int($0.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self)) }
                let nameBytes = buffer[(offset + 16)..<min(count, offset + 16 + length)].prefix { $0 != 0 }
                offset += 16 + length
                applied &+= 1
                if mask & UInt32(IN_Q_OVERFLOW) != 0 {
                    states = [:]
                    overflows += 1
                    completing = true
                    continue
                }
                guard !nameBytes.isEmpty else { continue }
                let name = String(decoding: nameBytes, as: UTF8.self).replacingOccurrences(of: "\u{FFFD}", with: "_")
                let previous = states[name]?.state
                let state: State?
                if mask & UInt32(IN_MOVED_TO) != 0 {
                    state = .renamedIn
                    completing = true
                } else if mask & UInt32(IN_CREATE) != 0 {
                    state = .created
                } else if mask & UInt32(IN_CLOSE_WRITE) != 0 {
                    state = previous == .renamedIn ? nil : .closedAfterWriting
                    completing = true
                } else if mask & UInt32(IN_MODIFY) != 0 {
                    state = .beingWritten
                } else {
                    state = nil
                }
                if let state { states[name] = (state, applied) }
            }
            reading = false
            lock.unlock()
            if completing { onChange() }
        }
        close(descriptor)
    }
}
