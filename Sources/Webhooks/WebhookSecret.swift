import Foundation
import Ingest

/// The signing secret, `whsec_<base64>` as the Standard Webhooks specification writes it, read
/// from a file only its owner can read (see ``SecretFile``).
public struct WebhookSecret: Sendable {
    /// The HMAC key: the decoded base64 after `whsec_`.
    public let key: [UInt8]

    public init(key: [UInt8]) {
        self.key = key
    }

    public init(file path: String) throws(SecretFileError) {
        key = try SecretFile(path, prefix: "whsec_", purpose: "webhook secret").key
    }
}
