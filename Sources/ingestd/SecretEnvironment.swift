import Foundation

/// Secrets that arrive in the environment (`INGESTD_DATABASE_URL`, the AWS keys) are dropped
/// once read. `unsetenv` alone is not enough: `/proc/PID/environ` shows the strings the process
/// started with, which `unsetenv` leaves in place, so their values are overwritten first.
enum SecretEnvironment {
    static let names = ["INGESTD_DATABASE_URL", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"]

    /// Overwrites and removes `names` (call once every client that needs them is made).
    static func forget(_ names: [String] = names) {
        for name in names {
            if let value = getenv(name) { memset(value, 0, strlen(value)) }
            unsetenv(name)
        }
    }
}
