import Foundation

/// A flag set once when jobs in flight must stop; readable from any thread.
public final class StopFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var stopped = false
    public var value: Bool {
        lock.lock()
        defer { lock.unlock() }
        return stopped
    }
    public init() {}

    public func set() {
        lock.lock()
        stopped = true
        lock.unlock()
    }
}
