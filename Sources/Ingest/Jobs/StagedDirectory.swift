import Foundation
import Transcode

/// An output directory that appears all at once: written under a hidden staging name beside
/// the destination, then renamed into place, so readers never see a half-written ladder.
public struct StagedDirectory: Sendable {
    /// Final location.
    public let destination: String
    /// Where the content is written until ``publish()``.
    public let staging: String

    /// What every staging name of `name` starts with.
    public static func stagingPrefix(of name: String) -> String { ".\(name).staging-" }

    /// Prepares staging for `destination`, which must not exist or be an empty directory.
    /// `attempt` names the staging after a worker's attempt (`.<name>.staging-t<attempt>`), so
    /// its worker can remove exactly its own, and then the parent (the CDN root) must exist: a
    /// missing mount is never recreated on the root disk. Otherwise the name carries this
    /// process's pid and missing parents are created (`transcode --out a/b/c`).
    public init(destination: String, attempt: Int64? = nil) throws {
        let url = URL(fileURLWithPath: destination).standardizedFileURL
        self.destination = url.path
        let parent = url.deletingLastPathComponent().path
        staging = "\(parent)/\(Self.stagingPrefix(of: url.lastPathComponent))"
            + (attempt.map { AttemptVersion.name(token: $0) } ?? "\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        let fm = FileManager.default
        var isDirectory: ObjCBool = false
        if fm.fileExists(atPath: self.destination, isDirectory: &isDirectory) {
            let empty = isDirectory.boolValue && ((try? fm.contentsOfDirectory(atPath: self.destination))?.isEmpty ?? false)
            guard empty else {
                throw IngestError.outputExists(path: self.destination)
            }
        }
        do {
            if attempt == nil { try fm.createDirectory(atPath: parent, withIntermediateDirectories: true) }
            try fm.createDirectory(atPath: staging, withIntermediateDirectories: false)
        } catch {
            throw IngestError.cannotWrite(path: staging, reason: TranscodeError.writeFailure(error))
        }
    }

    /// Adopts a staging directory another process filled for `destination` (a job process that
    /// stages only; its parent publishes).
    public init(destination: String, staging: String) {
        self.destination = URL(fileURLWithPath: destination).standardizedFileURL.path
        self.staging = staging
    }

    /// Flushes the staged files to disk (unless whoever staged them did: `synced`) and renames
    /// the directory into place. `stillWanted` is asked after the flush, just before the rename;
    /// when it says no, nothing is published and the job ends as cancelled.
    public func publish(synced: Bool = false, while stillWanted: () -> Bool = { true }) throws {
        if !synced { try Durability.syncTree(staging) }
        // Checked after the (slow) syncs, right before the rename: the last moment to back out.
        guard stillWanted() else { throw IngestError.cancelled }
        if FileManager.default.fileExists(atPath: destination) {
            rmdir(destination)  // only succeeds when empty, which init checked
        }
        guard rename(staging, destination) == 0 else {
            throw IngestError.cannotWrite(path: destination, reason: String(cString: strerror(errno)))
        }
        try Durability.syncDirectory(URL(fileURLWithPath: destination).deletingLastPathComponent().path)
    }

    /// Undoes ``publish(synced:while:)``: the destination goes back to its staging name, for a
    /// publish whose end the store is known not to have recorded (nothing stays in view that
    /// the database does not call published).
    public func withdraw() throws {
        guard rename(destination, staging) == 0 else {
            throw IngestError.cannotWrite(path: destination, reason: "cannot withdraw: \(String(cString: strerror(errno)))")
        }
        try Durability.syncDirectory(URL(fileURLWithPath: destination).deletingLastPathComponent().path)
    }

    /// Removes whatever was staged.
    public func discard() {
        try? FileManager.default.removeItem(atPath: staging)
    }
}

/// fsync helpers: what must survive a power cut is flushed before it is renamed into view.
public enum Durability {
    public static func syncTree(_ path: String) throws {
        let fm = FileManager.default
        if let walker = fm.enumerator(atPath: path) {
            for case let relative as String in walker {
                try syncFile("\(path)/\(relative)")
            }
        }
        try syncDirectory(path)
    }

    public static func syncFile(_ path: String) throws {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw IngestError.cannotWrite(path: path, reason: String(cString: strerror(errno))) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw IngestError.cannotWrite(path: path, reason: String(cString: strerror(errno))) }
    }

    public static func syncDirectory(_ path: String) throws { try syncFile(path) }
}
