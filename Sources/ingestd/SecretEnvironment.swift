import Foundation

/// Secrets that arrive in the environment (`INGESTD_DATABASE_URL`, the AWS keys) are dropped
/// once read. `unsetenv` alone is not enough: `/proc/PID/environ` shows the strings the process
/// started with, which `unsetenv` leaves in place, so their values are overwritten first.
enum SecretEnvironment {
    static let names = ["INGESTD_DATABASE_URL", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"]

    /// Overwrites and removes `names` (call once every client that needs them is made).
    static func forget(_ names: [String] = names) {
        // Every entry of each name (an environment may hold one twice; getenv finds the first).
        var entry = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if let equals = text.firstIndex(of: "="), names.contains(String(text[..<equals])) {
                let offset = text.utf8.distance(from: text.utf8.startIndex, to: equals) + 1
                memset(pointer + offset, 0, strlen(pointer + offset))
            }
            entry += 1
        }
        for name in names { unsetenv(name) }
    }
}
