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

        public init(code: String, message: String) {
            self.code = code
            self.message = message
        }
    }

    /// The refusal for the upload at `path`, or nil when it may be queued.
    public static func check(_ path: String, limits: Preset.Limits) -> Refusal? {
        check(RawPath(bytes: Array(path.utf8CString)), display: path, limits: limits)
    }

    /// The refusal for a job's input, or nil when it may be run.
    public static func check(_ input: TranscodeJob.Input, limits: Preset.Limits) -> Refusal? {
        switch input {
        case .path(let path):
            return check(path, limits: limits)
        case .soleEntry(let holder):
            guard let raw = RawPath.entries(of: holder).first else { return Refusal(code: "missing", message: "\(holder): vanished") }
            return check(RawPath(holder, raw), display: "\(holder)/\(String(decoding: raw, as: UTF8.self))", limits: limits)
        }
    }

    static func check(_ path: RawPath, display input: String, limits: Preset.Limits) -> Refusal? {
        guard let info = path.lstat() else { return Refusal(code: "missing", message: "\(input): no such file or directory") }
        let mode = info.st_mode & S_IFMT
        if mode == S_IFLNK { return Refusal(code: "symlink", message: "\(input): symbolic links are not accepted") }
        let admission = Admission(limits: limits)
        if mode == S_IFDIR {
            let size = Spool.tree(path, atMost: admission.maxUploadFiles).bytes
            if let refusal = admission.sizeRefusal(directory: input, bytes: size == Spool.tooManyFiles ? nil : size,
                                                   manifestAllowance: Upload.maxManifestBytes) {
                return Refusal(code: "too_large", message: refusal)
            }
            guard path.appending(Array(Upload.manifestName.utf8)).lstat() != nil else {
                return Refusal(code: "bad_upload", message: "\(input): an upload directory must contain \(Upload.manifestName)")
            }
            return nil
        }
        guard mode == S_IFREG else { return Refusal(code: "not_a_file", message: "\(input): not a regular file") }
        if let refusal = admission.sizeRefusal(file: input, bytes: Int64(info.st_size)) {
            return Refusal(code: "too_large", message: refusal)
        }
        return nil
    }
}
