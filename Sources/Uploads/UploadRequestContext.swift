import Hummingbird

/// The request context of every `ingestd serve` route: Hummingbird's core storage plus the
/// upload token, set (verified) by ``UploadAuthentication`` on the routes that need one.
struct UploadRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    /// The `?token=` whose signature and expiry were checked; nil on the routes without a token
    /// (`OPTIONS`, `/healthz`, `/metrics`, `/openapi.yaml`).
    var token: UploadToken?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
    }

    /// The token, on a route behind ``UploadAuthentication``, held to what the route needs: its
    /// `scope`, and when the path names one, the upload's `id` (`401` otherwise, as today).
    func token(_ scope: UploadToken.Scope, id: String? = nil) throws(TusRefusal) -> UploadToken {
        guard let token else { throw .token(.missing) }
        guard token.scope == scope else { throw .token(.wrongScope) }
        if let id, token.id != id { throw .token(.wrongID) }
        return token
    }
}
