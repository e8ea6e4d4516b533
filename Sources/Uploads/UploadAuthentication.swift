import Hummingbird

/// Verifies the request's `?token=` once (its MAC and expiry, ``UploadToken``) and puts it into
/// the context; a missing, malformed, forged or expired token is refused (`401`, thrown as a
/// ``TusRefusal`` for ``TusRefusals`` to answer) before any body is read.
struct UploadAuthentication: RouterMiddleware {
    typealias Context = UploadRequestContext

    let secret: [UInt8]

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        do {
            context.token = try UploadToken(verifying: request.uri.queryParameters["token"].map(String.init), secret: secret)
        } catch {
            throw TusRefusal.token(error)
        }
        return try await next(request, context)
    }
}

/// The tus routes' first check, before the token's: `Tus-Resumable: 1.0.0` (`412` otherwise).
struct TusVersionCheck: RouterMiddleware {
    typealias Context = UploadRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.headers[.tusResumable] == "1.0.0" else {
            throw TusRefusal(.preconditionFailed, "bad_version", "Tus-Resumable: 1.0.0 is required")
        }
        return try await next(request, context)
    }
}
