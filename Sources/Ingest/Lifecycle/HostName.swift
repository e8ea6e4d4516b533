import Foundation

/// This host's name as the kernel has it (`gethostname`, no DNS lookup): what a fleet's rows and
/// events say a host did.
public enum HostName {
    public static var current: String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "unknown" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
