import Foundation
import Synchronization

/// A job process's standard error (its log): passed through to this process's own, and its
/// last ``limit`` bytes kept, for the attempt's end event (what an operator's console shows of
/// the attempt). Read on a thread of its own until the job process (and anything it left
/// holding the pipe) has closed it.
public final class JobLogTail: Sendable {
    /// The most bytes kept.
    public static let limit = 4096
    let pipe = Pipe()
    private let kept = Mutex<[UInt8]>([])
    private let done = DispatchSemaphore(value: 0)

    public init() {}

    /// Starts reading (call once the job process holds the pipe's write end).
    func start() {
        let reading = pipe.fileHandleForReading
        let thread = Thread { [self] in
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(reading.fileDescriptor, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                _ = buffer.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, count) }
                self.kept.withLock { bytes in
                    bytes.append(contentsOf: buffer[..<count])
                    if bytes.count > Self.limit { bytes.removeFirst(bytes.count - Self.limit) }
                }
            }
            try? reading.close()
            self.done.signal()
        }
        thread.name = "ingestd job log"
        thread.start()
    }

    /// The last lines kept (from the first whole line), once the pipe is closed or `wait` has
    /// passed; nil when the job process wrote nothing.
    public func text(wait: Double = 1) -> String? {
        _ = done.wait(timeout: .now() + wait)
        let bytes = kept.withLock { $0 }
        guard !bytes.isEmpty else { return nil }
        let whole = bytes.count == Self.limit ? bytes.drop { $0 != 0x0a }.dropFirst() : bytes[...]
        let text = String(decoding: whole, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? nil : text
    }
}
