import Foundation

// glibc's, declared only under _GNU_SOURCE, which Swift's Glibc module does not set. Foundation's
// `Thread.name` does not reliably reach the kernel's name (perf, top -H), so it is set here.
@_silgen_name("pthread_setname_np") private func setThreadName(_ thread: pthread_t, _ name: UnsafePointer<CChar>) -> Int32
@_silgen_name("pthread_getname_np") private func getThreadName(_ thread: pthread_t, _ name: UnsafeMutablePointer<CChar>, _ length: Int) -> Int32

/// Names the calling thread (Linux keeps the first 15 bytes).
func nameThisThread(_ name: String) {
    _ = setThreadName(pthread_self(), String(decoding: name.utf8.prefix(15), as: UTF8.self))
}

/// Runs `body` with the calling thread named `name`, then restores its name. Threads a library
/// starts inside `body` inherit the name: libx264's lookahead and frame threads then say which
/// rung they encode, in `top -H` and `perf report --sort comm`.
func withThreadName<T>(_ name: String, _ body: () throws -> T) rethrows -> T {
    var saved = [CChar](repeating: 0, count: 16)
    let restore = getThreadName(pthread_self(), &saved, saved.count) == 0
    nameThisThread(name)
    defer { if restore { _ = setThreadName(pthread_self(), saved) } }
    return try body()
}

/// Starts `body` on a new thread named `name` (a new thread otherwise inherits its creator's name).
func startThread(named name: String, stackSize: Int? = nil, _ body: @escaping () -> Void) {
    nonisolated(unsafe) let body = body
    let thread = Thread {
        nameThisThread(name)
        body()
    }
    if let stackSize { thread.stackSize = stackSize }
    thread.start()
}
