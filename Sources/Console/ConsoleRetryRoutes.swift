import Hummingbird
import Ingest
import Logging

/// The console's one write (behind ``ConsoleAuthentication`` and ``ConsoleWriteCheck``).
struct ConsoleRetryRoutes {
    let store: any JobStore & JobBrowser
    let snapshot: ConsoleSnapshot
    let retryCap: Int
    let logger: Logger

    func addRoutes(to router: some RouterMethods<ConsoleRequestContext>) {
        router.post("/console/jobs/retry", use: retry)
    }

    /// `POST /console/jobs/retry`: the ids given (`id`, repeated), or with `action=all` every job
    /// the filter matches, once `confirm` says how many the operator saw (a different count now
    /// retries nothing: 409). Each batch is one store retry, fenced on the job still being failed
    /// (or rejected, with `rejected=1`); jobs no longer so are skipped and said to be. Answers
    /// `303` back to the page, or JSON `{"retried", "skipped"}` to a script.
    func retry(_ request: Request, context: ConsoleRequestContext) async throws -> Response {
        let identity = try context.requireIdentity()
        let form = try await request.decode(as: RetryForm.self, context: context)
        var (ids, rejected) = (form.ids, form.rejected)
        if form.all {
            guard form.filter.state == .failed || form.filter.state == .rejected else {
                return .problem(.badRequest, "retrying all matching needs state=failed or state=rejected")
            }
            let matching = try await form.filter.ids(in: store, cap: retryCap)
            guard let confirm = form.confirm.flatMap({ Int($0) }), confirm == matching.count else {
                return .problem(.conflict, "\(matching.count) jobs match now, not the \(form.confirm ?? "none") confirmed: nothing was retried; read the list again")
            }
            ids = matching
            rejected = form.filter.state == .rejected
        }
        ids = Array(Set(ids)).sorted()
        guard !ids.isEmpty else { return .problem(.badRequest, "name the jobs to retry (id=…), or retry all matching a filter") }
        guard ids.count <= retryCap else { return .problem(.badRequest, "at most \(retryCap) jobs per retry; \(ids.count) were named") }
        var retried: [String] = []
        for start in stride(from: 0, to: ids.count, by: 500) {
            retried += try await store.retry(Array(ids[start..<min(start + 500, ids.count)]), rejected: rejected)
        }
        snapshot.wake()
        let skipped = Array(Set(ids).subtracting(retried)).sorted()
        logger.notice("console: retry", metadata: ["role": "\(identity.role.rawValue)", "token": "\(identity.tokenHash)",
                                                   "asked": "\(ids.count)", "retried": "\(retried.count)", "skipped": "\(skipped.count)",
                                                   "rejected": "\(rejected)"])
        if request.wantsJSON { return .json(["retried": retried, "skipped": skipped]) }
        return .seeOther(form.back + (form.back.contains("?") ? "&" : "?") + "retried=\(retried.count)&skipped=\(skipped.count)")
    }
}
