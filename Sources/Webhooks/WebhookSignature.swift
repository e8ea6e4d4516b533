import Crypto
import Foundation

/// Standard Webhooks signing: `v1,` + base64 HMAC-SHA256 of `"<id>.<timestamp>.<body>"`.
public enum WebhookSignature {
    public static func sign(id: String, timestamp: Int, body: String, secret: WebhookSecret) -> String {
        let code = HMAC<SHA256>.authenticationCode(for: Data("\(id).\(timestamp).\(body)".utf8), using: SymmetricKey(data: secret.key))
        return "v1," + Data(code).base64EncodedString()
    }
}
