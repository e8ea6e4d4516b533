import Foundation

/// A signing key read from a file only its owner can read: one line `<prefix><base64>`, 24 to
/// 64 bytes once decoded (the webhook secret `whsec_…`, the upload secret `upsec_…`).
public struct SecretFile: Sendable {
    /// The decoded key.
    public let key: [UInt8]
    /// The line as the file holds it, `<prefix><base64>` (what nginx is given for a playback key).
    public let line: String

    /// Reads and checks `path`: present, a regular file, not readable by group or others,
    /// holding one `<prefix><base64>` line. `purpose` names the file in errors ("webhook secret").
    public init(_ path: String, prefix: String, purpose: String) throws(SecretFileError) {
        func refuse(_ reason: String) -> SecretFileError { SecretFileError(purpose: purpose, path: path, reason: reason) }
        let data = try Self.ownerOnly(path, purpose: purpose)
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else { throw refuse("empty") }
        guard text.hasPrefix(prefix), let key = Data(base64Encoded: String(text.dropFirst(prefix.count))) else {
            throw refuse("expected one line \(prefix)<base64> (such as: echo \(prefix)$(openssl rand -base64 32))")
        }
        guard (24...64).contains(key.count) else { throw refuse("the key is \(key.count) bytes; 24 to 64 are needed") }
        self.key = Array(key)
        line = text
    }

    /// The bytes of `path` (at most 4 KiB), once it checks out as a secret's file: present, a
    /// regular file, not readable by group or others (the one rule for every secret file).
    public static func ownerOnly(_ path: String, purpose: String) throws(SecretFileError) -> Data {
        func refuse(_ reason: String) -> SecretFileError { SecretFileError(purpose: purpose, path: path, reason: reason) }
        var info = stat()
        guard stat(path, &info) == 0 else { throw refuse("cannot read it: \(String(cString: strerror(errno)))") }
        guard info.st_mode & S_IFMT == S_IFREG else { throw refuse("not a regular file") }
        guard info.st_mode & 0o077 == 0 else {
            throw refuse(String(format: "mode %03o lets others read or change it; chmod 600 it", info.st_mode & 0o777))
        }
        guard info.st_size <= 4096, let data = FileManager.default.contents(atPath: path) else {
            throw refuse("cannot read it (or larger than 4 KiB)")
        }
        return data
    }
}

/// Why a secret file was refused.
public struct SecretFileError: Error, CustomStringConvertible {
    public var purpose: String
    public var path: String
    public var reason: String
    public var description: String { "\(purpose) \(path): \(reason)" }

    public init(purpose: String, path: String, reason: String) {
        self.purpose = purpose
        self.path = path
        self.reason = reason
    }
}
