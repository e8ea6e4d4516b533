import Foundation
import Transcode

/// Checks that need no decoding, made before an upload is queued or run: it exists, it is a
/// regular file or a directory holding `upload.json` (never a link, a FIFO or a device), and
/// its bytes (every file of a directory) are within the size limit.
public enum UploadPrecheck {
    public struct Refusal: Error, Sendable, CustomStringConvertible {
        /// `missing`, `symlink`, `not_a_file`, `too_large` or `bad_upload`.
        public var code: String
        public var message: String
        public var description: String { message }
    }

    /// The refusal for the upload at `path`, or nil when it may be queued.
    public static func check(_ path: String, limits: Preset.Limits) -> Refusal? {
        check(RawPath(bytes: Array(path.utf8CString)), display: path, limits: limits)
    }

    static func check(_ path: RawPath, display input: String, limits: Preset.Limits) -> Refusal? {
        guard let info = path.lstat() else { return Refusal(code: "missing", message: "\(input): no such file or directory") }
        let mode = info.st_mode & S_IFMT
        if mode == S_IFLNK { return Refusal(code: "symlink", message: "\(input): symbolic links are not accepted") }
        let limit = limits.maxBytes
        if mode == S_IFDIR {
            let size = Spool.tree(path).bytes
            if size == Spool.tooManyFiles {
                return Refusal(code: "too_large", message: "\(input): more than \(Spool.maxUploadFiles) files in one upload")
            }
            if size > limit + Int64(Upload.maxManifestBytes) {
                return Refusal(code: "too_large", message: "\(input): upload directory holds \(size) bytes, over the limit of \(limit) bytes")
            }
            guard path.appending(Array(Upload.manifestName.utf8)).lstat() != nil else {
                return Refusal(code: "bad_upload", message: "\(input): an upload directory must contain \(Upload.manifestName)")
            }
            return nil
        }
        guard mode == S_IFREG else { return Refusal(code: "not_a_file", message: "\(input): not a regular file") }
        if Int64(info.st_size) > limit {
            return Refusal(code: "too_large", message: "\(input): size \(info.st_size) bytes exceeds the limit of \(limit) bytes")
        }
        return nil
    }
}
