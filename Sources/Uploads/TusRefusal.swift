import HTTPTypes
import Hummingbird
import Logging

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

/// What a token route (or its ``TusVersionCheck`` and ``UploadAuthentication``) throws, answered:
/// a ``TusRefusal`` with its status, the tus headers and its message as a line of text; any
/// other error as the request having broken off (`400`). Each is counted by reason; the
/// server's own faults (5xx) are logged. The connection closes after the answer
/// (``CloseAfterRefusal``): a body the refusal leaves unread is not waited for.
struct TusRefusals: RouterMiddleware {
    typealias Context = UploadRequestContext

    let metrics: UploadMetrics
    let logger: Logger

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do { return try await next(request, context) } catch { return answer(error) }
    }

    func answer(_ error: any Error) -> Response {
        let refusal = error as? TusRefusal ?? TusRefusal(.badRequest, "broken_request", "the request broke off: \(error)")
        metrics.refused(refusal.reason)
        if refusal.status.code >= 500 { logger.error("upload request failed", metadata: ["error": "\(refusal.message)"]) }
        var headers = TusHandler.tusHeaders
        headers[.contentType] = "text/plain; charset=utf-8"
        if refusal.status == .preconditionFailed { headers[.tusVersion] = "1.0.0" }
        if refusal.status == .serviceUnavailable { headers[.retryAfter] = "5" }
        headers[.connection] = "close"
        return Response(status: refusal.status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: refusal.message + "\n")))
    }
}
