import Hummingbird
import Ingest

/// The pages (behind ``ConsoleAuthentication``): the overview, the list, one job. Each is
/// HTML, or JSON for a script (`Accept: application/json`).
struct ConsolePageRoutes {
    let store: any JobStore & JobBrowser
    let snapshot: ConsoleSnapshot
    let pages: ConsolePages
    let retryCap: Int
    static let pageSize = 50

    func addRoutes(to router: some RouterMethods<ConsoleRequestContext>) {
        router.get("/console/", use: overview)
        router.get("/console/jobs", use: jobs)
        router.get("/console/jobs/:id", use: job)
    }

    func overview(_ request: Request, context: ConsoleRequestContext) async throws -> Response {
        let (identity, query) = (try context.requireIdentity(), try request.query(as: PageQuery.self))
        let shared = try await snapshot.shared()
        if request.wantsJSON { return .json(ActivityAnswer(shared.activity[query.window])) }
        let live = query.window == .hour ? "overview" : "overview:\(query.window.rawValue)"
        return .html(pages.page(title: "Overview", body: "<div id=\"live\">\(pages.overview(shared, window: query.window))</div>", live: live,
                                shared: shared, identity: identity, tab: "", notice: query.notice))
    }

    func jobs(_ request: Request, context: ConsoleRequestContext) async throws -> Response {
        let (identity, query) = (try context.requireIdentity(), try request.query(as: PageQuery.self))
        let filter = query.filter
        let shared = try await snapshot.shared()
        let page: JobPage
        if filter.isTab, let rows = shared.tabs[filter.state?.rawValue ?? ""] {
            page = JobPage(rows: rows, next: rows.count == Self.pageSize ? rows.last.map(JobCursor.init) : nil)
        } else {
            page = try await store.jobs(filter.query(limit: Self.pageSize))
        }
        if request.wantsJSON { return .json(JobsAnswer(page)) }
        let matching: Int? = switch filter.state {
        case let state? where state == .failed || state == .rejected:
            filter.isTab ? min(shared.overview.states[state], retryCap) : try await filter.ids(in: store, cap: retryCap).count
        default: nil
        }
        let body = pages.jobs(page.rows, filter: filter, next: page.next, matching: matching, canRetry: identity.role >= .operate)
        return .html(pages.page(title: filter.state?.rawValue ?? "All jobs", body: body, live: filter.view, shared: shared, identity: identity,
                                tab: filter.state?.rawValue ?? "all", notice: query.notice))
    }

    func job(_ request: Request, context: ConsoleRequestContext) async throws -> Response {
        let (identity, query) = (try context.requireIdentity(), try request.query(as: PageQuery.self))
        let id = context.parameters.get("id") ?? ""
        guard let job = try await store.job(id) else { return .problem(.notFound, "no job \(id)") }
        let history = try await store.history(id, limit: 200)
        if request.wantsJSON { return .json(JobAnswer(job: job, history: history)) }
        let shared = try await snapshot.shared()
        return .html(pages.page(title: id, body: pages.job(job, history: history, canRetry: identity.role >= .operate), live: "job",
                                shared: shared, identity: identity, tab: nil, notice: query.notice))
    }
}
