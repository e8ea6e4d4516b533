import Foundation

/// The one directory a fleet's job inputs may come from (`--uploads`, `INGESTD_UPLOADS`): a
/// job row or a `submit` naming anything else is refused, so a queue row cannot make a worker
/// open `/etc/shadow` or another tenant's files. An input must be spelt below the root (no `.`
/// or `..` steps) and every directory between the two must be a real directory, not a link.
///
/// The root also tells a missing upload from a missing mount: `submit` leaves ``markerName`` in
/// it, and a host that cannot see the marker (an empty mount point, a lost permission) is not
/// ready, rather than failing job after job for inputs that are in fact there.
public struct UploadsRoot: Sendable, CustomStringConvertible {
    /// The root as configured (standardized; the root itself may be a link, such as a mount
    /// point's, but nothing below it may be).
    public let path: String
    public static let markerName = ".ingestd-uploads"

    public var description: String { path }

    /// Refuses a root that is not an existing directory: a configured root is never created.
    public init(_ path: String) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw IngestError.inputMissing(path: path)
        }
        self.path = URL(fileURLWithPath: path).standardizedFileURL.path
    }

    /// Why `input` may not be run from this root; nil when it is inside.
    public func refusal(for input: TranscodeJob.Input) -> UploadPrecheck.Refusal? {
        let path: String
        switch input {
        case .path(let file): path = file
        case .soleEntry(let holder): path = holder + "/"
        }
        let outside = UploadPrecheck.Refusal(code: "outside_uploads", message: "\(input.description): not under the uploads root \(self.path)")
        guard path.hasPrefix(self.path + "/") else { return outside }
        var steps = path.dropFirst(self.path.count + 1).split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        if case .soleEntry = input { steps.removeLast() }  // the trailing "/"
        guard !steps.isEmpty, !steps.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." }) else { return outside }
        // Every directory on the way down (and the holder of a sole entry) is a real directory.
        var directory = self.path
        let directories = if case .soleEntry = input { steps } else { Array(steps.dropLast()) }
        for step in directories {
            directory += "/" + step
            var info = stat()
            guard lstat(directory, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
                return UploadPrecheck.Refusal(code: "outside_uploads", message: "\(input.description): \(directory) is not a directory of the uploads root (a link?)")
            }
        }
        return nil
    }

    /// Why this host cannot read uploads now (the root or its marker gone, no permission); nil
    /// when it can.
    public func problem() -> String? {
        guard access(path, R_OK | X_OK) == 0 else { return "uploads root \(path): \(String(cString: strerror(errno))) (is it mounted?)" }
        guard access("\(path)/\(Self.markerName)", F_OK) == 0 else {
            return "uploads root \(path) has no \(Self.markerName) (is it mounted? `ingestd submit` leaves it there)"
        }
        return nil
    }

    /// Leaves the marker (`submit` does, before queueing anything).
    public func mark() throws {
        let marker = "\(path)/\(Self.markerName)"
        guard access(marker, F_OK) != 0 else { return }
        guard FileManager.default.createFile(atPath: marker, contents: Data("ingestd uploads root: workers check this file is here\n".utf8)) else {
            throw IngestError.cannotWrite(path: marker, reason: "cannot create the uploads root's marker")
        }
    }
}
