import Foundation

/// Whether this host can take jobs now: its uploads root (if any) is readable with its marker
/// in place, its CDN root exists, is writable and keeps at least `minFreeBytes` free (as
/// Postfix's `queue_minfree`). Checked before every claim; a host that fails it claims
/// nothing, so a broken host cannot burn the queue's attempts.
struct HostHealth: Sendable {
    let cdn: String
    let minFreeBytes: Int64
    var uploads: UploadsRoot? = nil

    struct Check: Sendable {
        /// Why the host cannot take jobs; nil when it can.
        var problem: String?
        var freeBytes: Int64?
    }

    func check() -> Check {
        if let problem = uploads?.problem() { return Check(problem: problem) }
        var info = statvfs()
        guard statvfs(cdn, &info) == 0 else { return Check(problem: "\(cdn): \(String(cString: strerror(errno))) (is it mounted?)") }
        let free = Int64(info.f_bavail) * Int64(info.f_frsize)
        guard free >= minFreeBytes else {
            return Check(problem: "\(cdn): \(free) bytes free, below --min-free \(minFreeBytes)", freeBytes: free)
        }
        // Permissions and a read-only mount (EROFS), without leaving anything behind.
        guard access(cdn, W_OK) == 0 else {
            return Check(problem: "\(cdn): not writable (\(String(cString: strerror(errno))))", freeBytes: free)
        }
        return Check(problem: nil, freeBytes: free)
    }
}
