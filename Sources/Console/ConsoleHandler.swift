import Foundation
import HTTPTypes
import Hummingbird
import Ingest
import Logging
import ServiceLifecycle

/// The console's routes: who is asking (a Bearer token, or the login cookie), the pages, the
/// event stream, and the one write (retry).
struct ConsoleHandler: Sendable {
    let store: any JobStore & JobBrowser
    let snapshot: ConsoleSnapshot
    let tokens: ConsoleTokens
    let pages: ConsolePages
    let retryCap: Int
    let logger: Logger
    static let cookie = "ingestd_console"
    static let pageSize = 50

    // MARK: who

    /// The identity a request carries: `Authorization: Bearer TOKEN`, else the login cookie.
    func identity(_ request: Request) -> ConsoleIdentity? {
        if let header = request.headers[.authorization] {
            return header.hasPrefix("Bearer ") ? tokens.identity(header.dropFirst(7)) : nil
        }
        for field in request.headers[values: .cookie] {
            for pair in field.split(separator: ";") {
                let parts = pair.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
                if parts.count == 2, parts[0] == Self.cookie { return tokens.identity(parts[1]) }
            }
        }
        return nil
    }

    /// Runs `handler` for a known identity (a write: an `operate` one, from this console's own
    /// pages): 401 without a credential (the login page, for a browser), 403 otherwise. What
    /// the store could not answer is a 503 with the reason, never a 500.
    func guarded(_ request: Request, write: Bool = false, _ handler: (ConsoleIdentity) async throws -> Response) async -> Response {
        guard let identity = identity(request) else {
            if wantsHTML(request) && request.method == .get {
                return html(pages.login(message: nil, back: request.uri.string), status: .unauthorized)
            }
            return problem(.unauthorized, "a console token is needed (Authorization: Bearer TOKEN, or log in)",
                           headers: [.wwwAuthenticate: "Bearer realm=\"ingestd console\""])
        }
        if write {
            if let foreign = crossSite(request) { return problem(.forbidden, "refused: a write from another site (\(foreign))") }
            guard identity.role >= .operate else {
                logger.notice("console: write refused to a read token", metadata: ["token": "\(identity.tokenHash)", "path": "\(request.uri.path)"])
                return problem(.forbidden, "this token may read, not act (its role is read)")
            }
        }
        do {
            return try await handler(identity)
        } catch {
            logger.warning("console: the store did not answer", metadata: ["error": "\(error)", "path": "\(request.uri.path)"])
            return problem(.serviceUnavailable, "the job store did not answer: \(error)")
        }
    }

    /// Why a write must be refused as cross-site: `Sec-Fetch-Site` other than `same-origin` or
    /// `none`, or an `Origin` other than this server's.
    func crossSite(_ request: Request) -> String? {
        if let site = request.headers[.secFetchSite], site != "same-origin", site != "none" { return "Sec-Fetch-Site: \(site)" }
        if let origin = request.headers[.origin] {
            let authority = request.head.authority ?? ""
            guard origin == "http://\(authority)" || origin == "https://\(authority)" else { return "Origin: \(origin)" }
        }
        return nil
    }

    func wantsJSON(_ request: Request) -> Bool { request.headers[.accept]?.contains("application/json") ?? false }
    func wantsHTML(_ request: Request) -> Bool { !wantsJSON(request) }

    // MARK: pages

    func overviewPage(_ request: Request, _ identity: ConsoleIdentity) async throws -> Response {
        let shared = try await latest()
        return html(pages.page(title: "Overview", body: "<div id=\"live\">\(pages.overview(shared.overview))</div>", live: "overview", shared: shared,
                               identity: identity, tab: "", notice: notice(request)))
    }

    func jobsPage(_ request: Request, _ identity: ConsoleIdentity) async throws -> Response {
        let filter = ConsoleFilter(FormFields(request.uri.query ?? ""))
        let shared = try await latest()
        let page: JobPage
        if filter.isTab, let rows = shared.tabs[filter.state?.rawValue ?? ""] {
            page = JobPage(rows: rows, next: rows.count == Self.pageSize ? rows.last.map(JobCursor.init) : nil)
        } else {
            page = try await store.jobs(filter.query(limit: Self.pageSize))
        }
        if wantsJSON(request) { return json(JobsAnswer(page)) }
        let matching: Int? = switch filter.state {
        case let state? where state == .failed || state == .rejected:
            filter.isTab ? min(shared.overview.states[state], retryCap) : try await matchingIDs(filter).count
        default: nil
        }
        let body = pages.jobs(page.rows, filter: filter, next: page.next, matching: matching, canRetry: identity.role >= .operate)
        return html(pages.page(title: filter.state?.rawValue ?? "All jobs", body: body, live: filter.view, shared: shared, identity: identity,
                               tab: filter.state?.rawValue ?? "all", notice: notice(request)))
    }

    func jobPage(_ request: Request, _ identity: ConsoleIdentity, id: String) async throws -> Response {
        guard let job = try await store.job(id) else { return problem(.notFound, "no job \(id)") }
        let history = try await store.history(id, limit: 200)
        if wantsJSON(request) { return json(JobAnswer(job: job, history: history)) }
        let shared = try await latest()
        return html(pages.page(title: id, body: pages.job(job, history: history, canRetry: identity.role >= .operate), live: "job", shared: shared,
                               identity: identity, tab: nil, notice: notice(request)))
    }

    /// `?retried=N&skipped=M`, as the retry's redirect left it.
    func notice(_ request: Request) -> String? {
        let fields = FormFields(request.uri.query ?? "")
        guard let retried = fields["retried"].flatMap({ Int($0) }) else { return nil }
        let skipped = fields["skipped"].flatMap { Int($0) } ?? 0
        return "Retried \(retried) job\(retried == 1 ? "" : "s")" + (skipped > 0 ? "; \(skipped) skipped (no longer failed or rejected)." : ".")
    }

    func latest() async throws -> ConsoleSnapshot.Shared {
        guard let shared = await snapshot.latest() else { throw StoreSilent() }
        return shared
    }

    struct StoreSilent: Error, CustomStringConvertible {
        var description: String { "no snapshot could be read yet" }
    }

    // MARK: the event stream

    /// `text/event-stream`: one `snapshot` event per changed snapshot (counts, the read time,
    /// and for a tab or the overview its HTML), a comment for each unchanged one.
    func events(_ request: Request, _ identity: ConsoleIdentity) -> Response {
        let view = FormFields(request.uri.query ?? "")["view"] ?? ""
        let (snapshot, pages, canRetry) = (snapshot, pages, identity.role >= .operate)
        return Response(status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-store"], body: .init { writer in
            var sent = -1
            for await shared in await snapshot.subscribe().cancelOnGracefulShutdown() {
                guard shared.version != sent else {
                    try await writer.write(ByteBuffer(string: ": unchanged\n\n"))
                    continue
                }
                sent = shared.version
                var event: [String: Any] = ["version": shared.version, "taken": ConsolePages.time(shared.takenAt),
                                            "counts": ConsolePages.counts(shared.overview)]
                if view == "overview" { event["html"] = pages.overview(shared.overview) }
                if view.hasPrefix("tab:"), let rows = shared.tabs[String(view.dropFirst(4))] { event["html"] = pages.rowsHTML(rows, canRetry: canRetry) }
                let data = try JSONSerialization.data(withJSONObject: event, options: [.sortedKeys])
                try await writer.write(ByteBuffer(string: "event: snapshot\ndata: \(String(decoding: data, as: UTF8.self))\n\n"))
            }
            try await writer.finish(nil)
        })
    }

    // MARK: answers

    func html(_ text: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: "text/html; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) -> Response {
        let data = (try? JSONEncoder.ingestd.encode(value)) ?? Data("{}".utf8)
        return Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// An error as one line of text (or `{"error": …}` for a script).
    func problem(_ status: HTTPResponse.Status, _ message: String, headers: HTTPFields = [:]) -> Response {
        var response = Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: message + "\n")))
        response.headers[.contentType] = "text/plain; charset=utf-8"
        return response
    }
}
