import Foundation
import HTTPTypes
import Hummingbird
import Logging

/// Headers on every answer: a CSP with no inline script or style (media and posters from the
/// CDN only), no framing, no sniffing, nothing cached.
struct ConsoleHeaders<Context: RequestContext>: RouterMiddleware {
    let policy: String

    init(cdnURL: String?) {
        let cdn = cdnURL.flatMap { URL(string: $0) }.flatMap { url in url.scheme.map { "\($0)://\(url.host ?? "")\(url.port.map { ":\($0)" } ?? "")" } }
        let media = (["'self'"] + (cdn.map { [$0] } ?? [])).joined(separator: " ")
        policy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src \(media) data:; media-src \(media) blob:; "
            + "connect-src \(media); form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        response.headers[.contentSecurityPolicy] = policy
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[.xFrameOptions] = "DENY"
        response.headers[.referrerPolicy] = "same-origin"
        response.headers[.crossOriginResourcePolicy] = "same-origin"
        if response.headers[.cacheControl] == nil { response.headers[.cacheControl] = "no-store" }
        return response
    }
}

extension HTTPField.Name {
    static let secFetchSite = Self("Sec-Fetch-Site")!
    static let crossOriginResourcePolicy = Self("Cross-Origin-Resource-Policy")!
    static let xFrameOptions = Self("X-Frame-Options")!
    static let referrerPolicy = Self("Referrer-Policy")!
}

/// What a route throws, answered: a ``ConsoleProblem`` as its line of text; what the store
/// could not answer as a `503` with the reason, never a `500`. Hummingbird's own errors (an
/// unknown route's `404`) pass through.
struct ConsoleErrors<Context: RequestContext>: RouterMiddleware {
    let logger: Logger

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let problem as ConsoleProblem {
            return problem.response(from: request, context: context)
        } catch let error as any HTTPResponseError {
            throw error
        } catch {
            logger.warning("console: the store did not answer", metadata: ["error": "\(error)", "path": "\(request.uri.path)"])
            return .problem(.serviceUnavailable, "the job store did not answer: \(error)")
        }
    }
}
