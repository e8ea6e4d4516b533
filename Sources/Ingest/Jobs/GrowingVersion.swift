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

    var version: String { AttemptVersion.name(token: token) }

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
            if let shown = shownToken, shown > token {
                throw IngestError.cannotWrite(path: "\(root)/master.m3u8", reason: "a newer attempt's version (t\(shown)) is shown")
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

    /// Removes the versions of earlier attempts (their owners lost the job or were killed) and a
    /// pointer that names one, even one whose files are gone already; a published one stays.
    func discardEarlier() {
        guard FileManager.default.fileExists(atPath: root) else { return }
        try? locked {
            let shown = shownToken, published = isPublished
            if let shown, shown < token, !published { try remove("\(root)/master.m3u8") }
            for name in (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [] {
                guard let earlier = AttemptVersion.token(of: name), earlier < token else { continue }
                if earlier == shown, published { continue }
                try? FileManager.default.removeItem(atPath: "\(root)/\(name)")
            }
        }
    }

    private var isPublished: Bool { FileManager.default.fileExists(atPath: "\(root)/manifest.json") }

    /// The token of the version `master.m3u8` names now.
    private var shownToken: Int64? {
        guard let data = try? DurableFile.read("\(root)/master.m3u8", limit: 1 << 20),
              let name = VersionPointer.version(ofMaster: String(decoding: data, as: UTF8.self)) else { return nil }
        return AttemptVersion.token(of: name)
    }

    private func remove(_ path: String) throws {
        guard unlink(path) == 0 || errno == ENOENT else {
            throw IngestError.cannotWrite(path: path, reason: String(cString: strerror(errno)))
        }
    }

    /// Runs `body` holding an exclusive `flock` on `CDN/<id>` (shared by every process on the
    /// host). Waits at most 10 s: a job process, which may write in `CDN/<id>`, can take the same
    /// lock, but never hold its worker up.
    private func locked<T>(_ body: () throws -> T) throws -> T {
        let fd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw IngestError.cannotWrite(path: root, reason: String(cString: strerror(errno))) }
        defer { close(fd) }
        let deadline = ContinuousClock.now + .seconds(10)
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR, ContinuousClock.now < deadline else {
                throw IngestError.cannotWrite(path: root, reason: "cannot lock: \(String(cString: strerror(errno)))")
            }
            usleep(10_000)
        }
        return try body()
    }
}
