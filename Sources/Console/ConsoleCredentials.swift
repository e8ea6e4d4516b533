import Hummingbird
import Logging

/// Who is asking: `Authorization: Bearer TOKEN`, else the login cookie. Puts the identity in
/// the context; without one, `401` (the login form for a browser's `GET`).
struct ConsoleAuthentication: RouterMiddleware {
    typealias Context = ConsoleRequestContext

    /// The login cookie's name.
    static let cookie = "ingestd_console"
    let tokens: ConsoleTokens
    let pages: ConsolePages

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let identity = identity(request) else {
            if !request.wantsJSON && request.method == .get {
                return .html(pages.login(message: nil, back: request.uri.string), status: .unauthorized)
            }
            return .problem(.unauthorized, "a console token is needed (Authorization: Bearer TOKEN, or log in)",
                            headers: [.wwwAuthenticate: "Bearer realm=\"ingestd console\""])
        }
        var context = context
        context.identity = identity
        return try await next(request, context)
    }

    /// The identity a request carries: a Bearer token (any other `Authorization` carries none),
    /// else the login cookie's.
    func identity(_ request: Request) -> ConsoleIdentity? {
        if let header = request.headers[.authorization] {
            return header.hasPrefix("Bearer ") ? tokens.identity(header.dropFirst(7)) : nil
        }
        return request.cookies[Self.cookie].flatMap { tokens.identity($0.value) }
    }
}

/// A write (behind ``ConsoleAuthentication``): from this console's own pages, by an `operate`
/// token; `403` otherwise.
struct ConsoleWriteCheck: RouterMiddleware {
    typealias Context = ConsoleRequestContext

    let logger: Logger

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let identity = try context.requireIdentity()
        if let foreign = Self.crossSite(request) { return .problem(.forbidden, "refused: a write from another site (\(foreign))") }
        guard identity.role >= .operate else {
            logger.notice("console: write refused to a read token", metadata: ["token": "\(identity.tokenHash)", "path": "\(request.uri.path)"])
            return .problem(.forbidden, "this token may read, not act (its role is read)")
        }
        return try await next(request, context)
    }

    /// Why a write must be refused as cross-site (the console's CSRF rule): `Sec-Fetch-Site`
    /// other than `same-origin` or `none`, or an `Origin` other than this server's.
    static func crossSite(_ request: Request) -> String? {
        if let site = request.headers[.secFetchSite], site != "same-origin", site != "none" { return "Sec-Fetch-Site: \(site)" }
        if let origin = request.headers[.origin] {
            let authority = request.head.authority ?? ""
            guard origin == "http://\(authority)" || origin == "https://\(authority)" else { return "Origin: \(origin)" }
        }
        return nil
    }
}
