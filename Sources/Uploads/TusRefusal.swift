import HTTPTypes

/// A tus request refused: the status the client gets, what it is told, and the reason the
/// refusals metric counts it under.
public struct TusRefusal: Error, CustomStringConvertible, Sendable {
    public var status: HTTPResponse.Status
    public var message: String
    public var reason: String

    public init(_ status: HTTPResponse.Status, _ reason: String, _ message: String) {
        self.status = status
        self.reason = reason
        self.message = message
    }

    public var description: String { "\(status.code) \(message)" }

    static func token(_ refusal: UploadToken.Refusal) -> TusRefusal {
        switch refusal {
        case .expired: TusRefusal(.unauthorized, "token_expired", "\(refusal)")
        case .wrongID: TusRefusal(.unauthorized, "token_other_upload", "\(refusal)")
        default: TusRefusal(.unauthorized, "token_invalid", "\(refusal)")
        }
    }

    /// 460, the tus checksum extension's "Checksum Mismatch".
    static let checksumMismatch = HTTPResponse.Status(code: 460, reasonPhrase: "Checksum Mismatch")
}
