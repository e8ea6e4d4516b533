import Hummingbird
import Logging

/// Logging in and out: the token from the login form becomes an `HttpOnly; SameSite=Strict`
/// cookie scoped to `/console` (12 hours).
struct ConsoleLoginRoutes {
    let tokens: ConsoleTokens
    let pages: ConsolePages
    let logger: Logger

    func addRoutes(to router: some RouterMethods<ConsoleRequestContext>) {
        router.get("/console/login", use: loginPage)
        router.post("/console/login", use: login)
        router.post("/console/logout", use: logout)
    }

    func loginPage(_ request: Request, context: ConsoleRequestContext) throws -> Response {
        .html(pages.login(message: nil, back: try request.query(as: LoginForm.self).back))
    }

    /// Checks the form's token and sets it as the cookie, then sends the browser back where it was going.
    func login(_ request: Request, context: ConsoleRequestContext) async throws -> Response {
        if let foreign = ConsoleWriteCheck.crossSite(request) { return .problem(.forbidden, "refused: a login from another site (\(foreign))") }
        let form = try await request.decode(as: LoginForm.self, context: context)
        guard let token = form.token, let identity = tokens.identity(token) else {
            logger.notice("console: login refused")
            return .html(pages.login(message: "That token is not in the console's tokens file.", back: form.back), status: .unauthorized)
        }
        guard let cookie = try? Self.cookie(token, maxAge: 43_200) else {
            return .html(pages.login(message: "That token has characters a cookie cannot hold: send it as Authorization: Bearer.",
                                     back: form.back), status: .badRequest)
        }
        logger.info("console: logged in", metadata: ["role": "\(identity.role.rawValue)", "token": "\(identity.tokenHash)"])
        var response = Response.seeOther(form.back)
        response.setCookie(cookie)
        return response
    }

    func logout(_ request: Request, context: ConsoleRequestContext) throws -> Response {
        if let foreign = ConsoleWriteCheck.crossSite(request) { return .problem(.forbidden, "refused: a logout from another site (\(foreign))") }
        var response = Response.seeOther("/console/login")
        response.setCookie(try Self.cookie("", maxAge: 0))
        return response
    }

    static func cookie(_ value: String, maxAge: Int) throws -> Cookie {
        try .validated(name: ConsoleAuthentication.cookie, value: value, maxAge: maxAge, path: "/console", httpOnly: true, sameSite: .strict)
    }
}
