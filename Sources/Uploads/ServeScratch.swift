import Foundation

/// Where a fleet `serve` process keeps request bodies on their way to the bucket: a directory of
/// its own under `base` (`ingestd-serve-<pid>-XXXXXX`, made by `mkdtemp`, mode 0700, so no other
/// user can read or swap a body before it is sent). Directories of processes that are gone (a
/// kill -9) are removed at start. The base should be on disk (the default is `/var/tmp`): a body
/// of up to one S3 part waits there, and on a tmpfs it would wait in memory.
enum ServeScratch {
    static func make(base: String) throws -> String {
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        for name in (try? FileManager.default.contentsOfDirectory(atPath: base)) ?? [] where name.hasPrefix("ingestd-serve-") {
            let fields = name.split(separator: "-")
            guard fields.count == 4, let pid = Int32(fields[2]), kill(pid, 0) != 0, errno == ESRCH else { continue }
            try? FileManager.default.removeItem(atPath: "\(base)/\(name)")
        }
        var template = Array("\(base)/ingestd-serve-\(getpid())-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: base, NSLocalizedDescriptionKey: String(cString: strerror(errno))])
        }
        return String(cString: made)
    }
}
