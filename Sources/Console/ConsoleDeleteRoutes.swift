import Hummingbird
import Ingest
import Logging

/// The console's deletion (behind ``ConsoleAuthentication`` and ``ConsoleWriteCheck``, as retry):
/// the one deletion's first step (``VideoDeletion/record(_:reason:in:)``), completed by the daemon
/// or worker that owns the store.
struct ConsoleDeleteRoutes {
    let store: any JobStore & JobBrowser
    let snapshot: ConsoleSnapshot
    let logger: Logger

    /// The most videos one request deletes.
    static let cap = 1000

    func addRoutes(to router: some RouterMethods<ConsoleRequestContext>) {
        router.post("/console/jobs/delete", use: delete)
    }

    /// `POST /console/jobs/delete`: the ids given (`id`, repeated), `code` and `reason`; each is
    /// recorded as deleted by `console:<token name>`. Answers `303` back to the page, or JSON
    /// `{"results": [...]}` (each id's outcome, with its tombstone) to a script.
    func delete(_ request: Request, context: ConsoleRequestContext) async throws -> Response {
        let identity = try context.requireIdentity()
        let form = try await request.decode(as: DeleteForm.self, context: context)
        guard let deletions = store as? any DeletionStore else { return .problem(.notImplemented, "this store cannot delete") }
        let ids = Array(Set(form.ids)).sorted()
        guard !ids.isEmpty, ids.count <= Self.cap else { return .problem(.badRequest, "name 1 to \(Self.cap) jobs to delete (id=…)") }
        guard let code = form.code.flatMap(DeletionCode.init(rawValue:)) else {
            return .problem(.badRequest, "code: one of \(DeletionCode.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        let reason: DeletionReason
        do {
            reason = try DeletionReason(code: code, text: form.reason ?? "", by: "console:\(identity.name)")
        } catch {
            return .problem(.badRequest, "\(error)")
        }
        var outcomes: [DeletionOutcome] = []
        for id in ids { outcomes.append(await VideoDeletion.record(id, reason: reason, in: deletions)) }
        snapshot.wake()
        let recorded = outcomes.filter { $0.result == .pending }.count
        logger.notice("console: delete", metadata: ["role": "\(identity.role.rawValue)", "token": "\(identity.tokenHash)", "code": "\(code.rawValue)",
                                                    "asked": "\(ids.count)", "recorded": "\(recorded)"])
        if request.wantsJSON { return .json(["results": outcomes], status: recorded > 0 ? .accepted : .ok) }
        return .seeOther(form.back + (form.back.contains("?") ? "&" : "?") + "deleted=\(recorded)&skipped=\(ids.count - recorded)")
    }
}

/// `POST /console/jobs/delete`: `id[]` (or one `id`), `code` and `reason` (a list's selection
/// names them `deleteCode` and `deleteReason`: its filter has a `code` of its own); `back`: the
/// page to return to.
struct DeleteForm: Decodable {
    var ids: [String]
    var code: String?
    var reason: String?
    var back: String

    enum CodingKeys: String, CodingKey { case id, code, reason, back, deleteCode, deleteReason }

    init(from decoder: any Decoder) throws {
        let fields = try decoder.container(keyedBy: CodingKeys.self)
        let listed = try? fields.decodeIfPresent([String].self, forKey: .id)
        ids = try (listed ?? fields.decodeIfPresent(String.self, forKey: .id).map { [$0] } ?? []).filter { !$0.isEmpty }
        code = try fields.text(.deleteCode) ?? fields.text(.code)
        reason = try fields.text(.deleteReason) ?? fields.text(.reason)
        back = ConsoleFormDecoder.back(try fields.text(.back))
    }
}
