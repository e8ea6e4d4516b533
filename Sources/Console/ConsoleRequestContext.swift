import Hummingbird

/// The request context of every console route: Hummingbird's core storage plus who is asking,
/// set by ``ConsoleAuthentication`` on the routes that need a credential. Bodies are read as
/// forms (at most 1 MiB).
struct ConsoleRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    /// The credential's identity; nil before ``ConsoleAuthentication`` (or on the login routes).
    var identity: ConsoleIdentity?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
    }

    var maxUploadSize: Int { 1 << 20 }
    var requestDecoder: ConsoleFormDecoder { ConsoleFormDecoder() }

    /// The identity, on a route behind ``ConsoleAuthentication`` (which refuses a request without one).
    func requireIdentity() throws(ConsoleProblem) -> ConsoleIdentity {
        guard let identity else { throw ConsoleProblem(.unauthorized, "a console token is needed (Authorization: Bearer TOKEN, or log in)") }
        return identity
    }
}

/// A refusal as the console answers it: one line of text with its status (see
/// `Response.problem`), thrown by a route and answered by ``ConsoleErrors``.
struct ConsoleProblem: HTTPResponseError {
    let status: HTTPResponse.Status
    let message: String
    var headers: HTTPFields = [:]

    init(_ status: HTTPResponse.Status, _ message: String, headers: HTTPFields = [:]) {
        self.status = status
        self.message = message
        self.headers = headers
    }

    func response(from request: Request, context: some RequestContext) -> Response {
        .problem(status, message, headers: headers)
    }
}
