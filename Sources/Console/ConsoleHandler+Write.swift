import Foundation
import Hummingbird
import Ingest

/// The console's writes: logging in and out, and the operator's retry.
extension ConsoleHandler {
    func loginPage(_ request: Request) -> Response {
        html(pages.login(message: nil, back: Self.back(FormFields(request.uri.query ?? "")["back"])))
    }

    /// Checks the token from the form and sets it as an `HttpOnly; SameSite=Strict` cookie
    /// scoped to `/console` (12 hours), then sends the browser back where it was going.
    func login(_ request: Request) async -> Response {
        if let foreign = crossSite(request) { return problem(.forbidden, "refused: a login from another site (\(foreign))") }
        let fields = await form(request)
        let back = Self.back(fields["back"])
        guard let token = fields["token"], let identity = tokens.identity(token) else {
            logger.notice("console: login refused")
            return html(pages.login(message: "That token is not in the console's tokens file.", back: back), status: .unauthorized)
        }
        logger.info("console: logged in", metadata: ["role": "\(identity.role.rawValue)", "token": "\(identity.tokenHash)"])
        return Response(status: .seeOther, headers: [
            .location: back, .setCookie: "\(Self.cookie)=\(token); Path=/console; HttpOnly; SameSite=Strict; Max-Age=43200",
        ])
    }

    func logout(_ request: Request) -> Response {
        if let foreign = crossSite(request) { return problem(.forbidden, "refused: a logout from another site (\(foreign))") }
        return Response(status: .seeOther, headers: [
            .location: "/console/login", .setCookie: "\(Self.cookie)=; Path=/console; HttpOnly; SameSite=Strict; Max-Age=0",
        ])
    }

    /// `POST /console/jobs/retry`: the ids given (`id`, repeated), or with `action=all` every job
    /// the filter matches, once `confirm` says how many the operator saw (a different count now
    /// retries nothing: 409). Each batch is one store retry, fenced on the job still being failed
    /// (or rejected, with `rejected=1`); jobs no longer so are skipped and said to be. Answers
    /// `303` back to the page, or JSON `{"retried", "skipped"}` to a script.
    func retry(_ request: Request, _ identity: ConsoleIdentity) async throws -> Response {
        let fields = await form(request)
        var ids = fields.all("id")
        var rejected = fields["rejected"] == "1"
        if fields["action"] == "all" || (ids.isEmpty && fields["confirm"] != nil) {
            let filter = ConsoleFilter(fields)
            guard filter.state == .failed || filter.state == .rejected else {
                return problem(.badRequest, "retrying all matching needs state=failed or state=rejected")
            }
            let matching = try await matchingIDs(filter)
            guard let confirm = fields["confirm"].flatMap({ Int($0) }), confirm == matching.count else {
                return problem(.conflict, "\(matching.count) jobs match now, not the \(fields["confirm"] ?? "none") confirmed: nothing was retried; read the list again")
            }
            ids = matching
            rejected = filter.state == .rejected
        }
        ids = Array(Set(ids)).sorted()
        guard !ids.isEmpty else { return problem(.badRequest, "name the jobs to retry (id=…), or retry all matching a filter") }
        guard ids.count <= retryCap else { return problem(.badRequest, "at most \(retryCap) jobs per retry; \(ids.count) were named") }
        var retried: [String] = []
        for start in stride(from: 0, to: ids.count, by: 500) {
            retried += try await store.retry(Array(ids[start..<min(start + 500, ids.count)]), rejected: rejected)
        }
        snapshot.wake()
        let skipped = Array(Set(ids).subtracting(retried)).sorted()
        logger.notice("console: retry", metadata: ["role": "\(identity.role.rawValue)", "token": "\(identity.tokenHash)",
                                                   "asked": "\(ids.count)", "retried": "\(retried.count)", "skipped": "\(skipped.count)",
                                                   "rejected": "\(rejected)"])
        if wantsJSON(request) { return json(["retried": retried, "skipped": skipped]) }
        let back = Self.back(fields["back"])
        return Response(status: .seeOther, headers: [
            .location: back + (back.contains("?") ? "&" : "?") + "retried=\(retried.count)&skipped=\(skipped.count)",
        ])
    }

    /// The ids of the jobs `filter` matches from its first page on, at most ``retryCap``.
    func matchingIDs(_ filter: ConsoleFilter) async throws -> [String] {
        var query = filter.query(limit: 1_000)
        query.after = nil
        var ids: [String] = []
        while ids.count < retryCap {
            let page = try await store.jobs(query)
            ids += page.rows.map(\.id)
            guard let next = page.next else { break }
            query.after = next
        }
        return Array(ids.prefix(retryCap))
    }

    /// The form's fields (a body of at most 1 MiB).
    func form(_ request: Request) async -> FormFields {
        var request = request
        guard let body = try? await request.collectBody(upTo: 1 << 20) else { return FormFields("") }
        return FormFields(String(buffer: body))
    }

    /// Where to send the browser back to: a console page, nothing else (no open redirect).
    static func back(_ given: String?) -> String {
        guard let given, given.hasPrefix("/console/"), !given.contains("//"), !given.contains("\\") else { return "/console/jobs" }
        return given
    }
}

/// `GET /console/jobs` for a script (`Accept: application/json`).
struct JobsAnswer: Encodable {
    struct Row: Encodable {
        var id, state, input: String
        var host, code: String?
        var attempts: Int
        var createdAt, updatedAt: Date
        var progress: Int?
        var playable: Bool
    }

    var jobs: [Row]
    /// The next page's `after=`.
    var next: String?

    init(_ page: JobPage) {
        jobs = page.rows.map { Row(id: $0.id, state: $0.state.rawValue, input: $0.input, host: $0.host, code: $0.code, attempts: $0.attempts,
                                   createdAt: $0.createdAt, updatedAt: $0.updatedAt, progress: $0.progress, playable: $0.playable) }
        next = page.next?.text
    }
}

/// `GET /console/jobs/<id>` for a script.
struct JobAnswer: Encodable {
    struct Event: Encodable {
        var at: Date
        var event: String
        var data: String
    }

    var job: JobSnapshot
    var history: [Event]

    init(job: JobSnapshot, history: [JobHistoryEvent]) {
        self.job = job
        self.history = history.map { Event(at: $0.at, event: $0.event, data: $0.data) }
    }
}
