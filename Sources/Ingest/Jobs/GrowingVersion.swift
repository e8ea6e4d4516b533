import Foundation
import Transcode

/// One attempt's version of a video played while it is made, in a directory CDN: the directory
/// `CDN/<id>/t<token>` its job process writes in place, and the pointers in `CDN/<id>`
/// (``VersionPointer``) that show it. Every change of the pointers happens under an exclusive
/// lock on `CDN/<id>`, and a pointer naming a newer attempt's version is never replaced, so a
/// stale attempt can never take the video back from the one that replaced it.
struct GrowingVersion {
    /// `CDN/<id>`.
    let root: String
    let token: Int64

    var version: String { AttemptOutput.version(token: token) }

    /// Points `master.m3u8` into this version, unless the video is published already or a newer
    /// attempt's version is shown. Returns whether it is shown.
    func show() throws -> Bool {
        try locked {
            guard !isPublished else { return false }
            if let shown = shownToken, shown > token { return false }
            try VersionPointer.pointMaster(root, version: version)
            return true
        }
    }

    /// Points `master.m3u8` at the version's measured master, then adds `manifest.json`: the
    /// video is published. An output already published (`adopted`, an earlier attempt's) stays,
    /// and this version goes. Returns whether this version was published.
    func publish(staging: String, adopted: Bool) throws -> Bool {
        try locked {
            guard !adopted, !isPublished else {
                if shownToken != token { try? FileManager.default.removeItem(atPath: staging) }
                return false
            }
            try VersionPointer.point(root, version: version)
            return true
        }
    }

    /// Takes this version out of view: the pointers that name it go (a player's next request
    /// for the master gets a 404).
    func withdraw() throws {
        try locked {
            guard shownToken == token else { return }
            if isPublished { try remove("\(root)/manifest.json") }
            try remove("\(root)/master.m3u8")
            try Durability.syncDirectory(root)
        }
    }

    /// Withdraws this version and removes it: a player still fetching it gets 404s, never
    /// another attempt's bytes.
    func discard() {
        try? withdraw()
        try? FileManager.default.removeItem(atPath: "\(root)/\(version)")
        rmdir(root)  // only when nothing else is there: an upload that never played leaves no trace
    }

    /// Removes the versions of earlier attempts (their owners lost the job or were killed), and
    /// the pointer of one that was shown; a published one stays.
    func discardEarlier() {
        guard FileManager.default.fileExists(atPath: root) else { return }
        try? locked {
            let shown = shownToken, published = isPublished
            for name in (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [] {
                guard let earlier = AttemptOutput.token(ofVersion: name), earlier < token else { continue }
                if earlier == shown {
                    if published { continue }
                    try remove("\(root)/master.m3u8")
                }
                try? FileManager.default.removeItem(atPath: "\(root)/\(name)")
            }
        }
    }

    private var isPublished: Bool { FileManager.default.fileExists(atPath: "\(root)/manifest.json") }

    /// The token of the version `master.m3u8` names now.
    private var shownToken: Int64? {
        guard let text = try? String(contentsOfFile: "\(root)/master.m3u8", encoding: .utf8),
              let name = VersionPointer.version(ofMaster: text) else { return nil }
        return AttemptOutput.token(ofVersion: name)
    }

    private func remove(_ path: String) throws {
        guard unlink(path) == 0 || errno == ENOENT else {
            throw IngestError.cannotWrite(path: path, reason: String(cString: strerror(errno)))
        }
    }

    /// Runs `body` holding an exclusive `flock` on `CDN/<id>` (shared by every process on the host).
    private func locked<T>(_ body: () throws -> T) throws -> T {
        let fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw IngestError.cannotWrite(path: root, reason: String(cString: strerror(errno))) }
        defer { close(fd) }
        while flock(fd, LOCK_EX) != 0 {
            guard errno == EINTR else { throw IngestError.cannotWrite(path: root, reason: String(cString: strerror(errno))) }
        }
        return try body()
    }
}
