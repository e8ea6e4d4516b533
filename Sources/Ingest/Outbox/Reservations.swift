import Foundation
import Synchronization

/// The outbox events this process is delivering: one `flock`ed descriptor per event.
final class Reservations: Sendable {
    private let held = Mutex<[String: Int32]>([:])

    /// Locks `lock` (created if absent) without waiting; false when another holder has it.
    func take(_ id: String, lock: String) -> Bool {
        held.withLock { held in
            if held[id] != nil { return false }
            let fd = open(lock, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
            guard fd >= 0 else { return false }
            guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
                close(fd)
                return false
            }
            held[id] = fd
            return true
        }
    }

    /// Lets go of `id`; `removing` the lock file once the event is no longer pending.
    func release(_ id: String, removing lock: String?) {
        held.withLock { held in
            guard let fd = held.removeValue(forKey: id) else { return }
            if let lock { unlink(lock) }  // before the unlock: a waiter that gets it finds no event
            close(fd)
        }
    }
}
