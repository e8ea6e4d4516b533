import Foundation

/// Whether this host can take jobs now: its uploads root (if any) is readable with its marker
/// in place, its CDN root exists, is writable and keeps at least `minFree` free, and so does
/// the scratch directory job processes write their files in, when it is on another file system.
/// Checked before every claim; a host that fails it claims nothing, so a broken host cannot
/// burn the queue's attempts.
struct HostHealth: Sendable {
    let cdn: String
    let minFree: FreeSpaceFloor
    var uploads: UploadsRoot? = nil
    /// Job processes' scratch (`TMPDIR`); checked only where it is not on the CDN's file system.
    var scratch: String = FileManager.default.temporaryDirectory.path

    struct Check: Sendable {
        /// Why the host cannot take jobs; nil when it can.
        var problem: String?
        var freeBytes: Int64?
        /// Free bytes in the scratch directory, when it is on a file system of its own.
        var scratchFreeBytes: Int64?
    }

    func check() -> Check {
        if let problem = uploads?.problem() { return Check(problem: problem) }
        let onCDN = space(cdn)
        var check = Check(problem: onCDN.problem, freeBytes: onCDN.free)
        var cdnInfo = stat(), scratchInfo = stat()
        guard check.problem == nil, stat(cdn, &cdnInfo) == 0 else { return check }
        guard stat(scratch, &scratchInfo) == 0 else {
            check.problem = "scratch \(scratch): \(String(cString: strerror(errno))) (is it mounted?)"
            return check
        }
        if cdnInfo.st_dev != scratchInfo.st_dev {
            let inScratch = space(scratch)
            check.scratchFreeBytes = inScratch.free
            check.problem = inScratch.problem.map { "scratch \($0)" }
        }
        return check
    }

    /// The free bytes of a directory that must be writable, and why it cannot take a job, if
    /// it cannot.
    private func space(_ path: String) -> (free: Int64?, problem: String?) {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return (nil, "\(path): \(String(cString: strerror(errno))) (is it mounted?)") }
        let free = Int64(info.f_bavail) * Int64(info.f_frsize)
        let floor = minFree.bytes(ofVolume: Int64(info.f_blocks) * Int64(info.f_frsize))
        guard free >= floor else { return (free, "\(path): \(free) bytes free, below --min-free \(floor) (\(minFree))") }
        // Permissions and a read-only mount (EROFS), without leaving anything behind.
        guard access(path, W_OK) == 0 else { return (free, "\(path): not writable (\(String(cString: strerror(errno))))") }
        return (free, nil)
    }
}
