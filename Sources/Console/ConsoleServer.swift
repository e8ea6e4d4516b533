import Foundation
import HTTPTypes
import Hummingbird
import Ingest
import Logging
import ServiceLifecycle
import Transcode

/// `ingestd console`: the operator's pages over a job store (the spool's or the fleet's queue),
/// served by Hummingbird under `/console/`. Processes no jobs itself.
public enum ConsoleServer {
    /// A worker host whose last heartbeat is older than this is shown gone.
    static let hostGone: TimeInterval = 90

    public struct Configuration: Sendable {
        public var host: String
        public var port: Int
        public var tokens: ConsoleTokens
        /// Where players and posters are fetched from (`--cdn-url`); none: no player.
        public var cdnURL: String?
        /// The store is the fleet's queue (hosts and their banner shown).
        public var fleet: Bool
        /// The limits each job's probe is shown against.
        public var limits: Preset.Limits
        /// The shared snapshot is read again at least this often.
        public var refresh: Duration
        /// The most jobs one "retry all matching" retries.
        public var retryCap: Int

        public init(host: String, port: Int, tokens: ConsoleTokens, cdnURL: String? = nil, fleet: Bool, limits: Preset.Limits,
                    refresh: Duration = .seconds(5), retryCap: Int = 10_000) {
            self.host = host
            self.port = port
            self.tokens = tokens
            self.cdnURL = cdnURL
            self.fleet = fleet
            self.limits = limits
            self.refresh = refresh
            self.retryCap = retryCap
        }
    }

    public static func make(_ configuration: Configuration, store: any JobStore & JobBrowser, logger: Logger) throws -> some Service {
        let snapshot = ConsoleSnapshot(browser: store, interval: configuration.refresh, logger: logger)
        let console = ConsoleHandler(store: store, snapshot: snapshot, tokens: configuration.tokens,
                                     pages: try ConsolePages(fleet: configuration.fleet, cdnURL: configuration.cdnURL, limits: configuration.limits),
                                     retryCap: configuration.retryCap, logger: logger)
        let router = Router()
        router.add(middleware: ConsoleHeaders(cdnURL: configuration.cdnURL))
        router.get("/console/") { request, _ in await console.guarded(request) { try await console.overviewPage(request, $0) } }
        router.get("/console/jobs") { request, _ in await console.guarded(request) { try await console.jobsPage(request, $0) } }
        router.get("/console/jobs/:id") { request, context in
            let id = context.parameters.get("id") ?? ""
            return await console.guarded(request) { try await console.jobPage(request, $0, id: id) }
        }
        router.post("/console/jobs/retry") { request, _ in
            await console.guarded(request, write: true) { try await console.retry(request, $0) }
        }
        router.get("/console/events") { request, _ in await console.guarded(request) { console.events(request, $0) } }
        router.get("/console/login") { request, _ in console.loginPage(request) }
        router.post("/console/login") { request, _ in await console.login(request) }
        router.post("/console/logout") { request, _ in console.logout(request) }
        router.get("/console/assets/console.js") { _, _ in
            Response(status: .ok, headers: [.contentType: "text/javascript; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: ConsoleAssets.script)))
        }
        router.get("/console/assets/console.css") { _, _ in
            Response(status: .ok, headers: [.contentType: "text/css; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: ConsoleAssets.stylesheet)))
        }
        router.get("/healthz") { _, _ -> String in "ok\n" }
        return Application(router: router, configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "ingestd"),
                           services: [snapshot], logger: logger)
    }
}

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
        if response.headers[.cacheControl] == nil { response.headers[.cacheControl] = "no-store" }
        return response
    }
}

extension HTTPField.Name {
    static let secFetchSite = Self("Sec-Fetch-Site")!
    static let xFrameOptions = Self("X-Frame-Options")!
    static let referrerPolicy = Self("Referrer-Policy")!
}
