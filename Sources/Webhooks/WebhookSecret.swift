import Foundation

/// The signing secret, `whsec_<base64>` as the Standard Webhooks specification writes it, read
/// from a file only its owner can read.
public struct WebhookSecret: Sendable {
    /// The HMAC key: the decoded base64 after `whsec_`.
    public let key: [UInt8]

    public init(key: [UInt8]) {
        self.key = key
    }

    /// Reads and checks `path`: present, a regular file, not readable by group or others,
    /// holding one `whsec_` secret of 24 to 64 bytes.
    public init(file path: String) throws(WebhookSecretError) {
        var info = stat()
        guard stat(path, &info) == 0 else { throw WebhookSecretError(path: path, reason: "cannot read it: \(String(cString: strerror(errno)))") }
        guard info.st_mode & S_IFMT == S_IFREG else { throw WebhookSecretError(path: path, reason: "not a regular file") }
        guard info.st_mode & 0o077 == 0 else {
            throw WebhookSecretError(path: path, reason: String(format: "mode %03o lets others read or change it; chmod 600 it", info.st_mode & 0o777))
        }
        guard info.st_size <= 4096, let data = FileManager.default.contents(atPath: path) else {
            throw WebhookSecretError(path: path, reason: "cannot read it (or larger than 4 KiB)")
        }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else { throw WebhookSecretError(path: path, reason: "empty") }
        guard text.hasPrefix("whsec_"), let key = Data(base64Encoded: String(text.dropFirst(6))) else {
            throw WebhookSecretError(path: path, reason: "expected one line whsec_<base64>")
        }
        guard (24...64).contains(key.count) else {
            throw WebhookSecretError(path: path, reason: "the key is \(key.count) bytes; the specification asks for 24 to 64")
        }
        self.key = Array(key)
    }
}

/// Why a webhook secret file was refused.
public struct WebhookSecretError: Error, CustomStringConvertible {
    public var path: String
    public var reason: String
    public var description: String { "webhook secret \(path): \(reason)" }
}
