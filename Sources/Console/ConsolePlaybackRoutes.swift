import Hummingbird
import Ingest
import Logging

/// The console's playback change (behind ``ConsoleAuthentication`` and ``ConsoleWriteCheck``,
/// as retry): ``PlaybackChange``, the one `ingestd playback` runs, on the CDN the console was
/// given (`--cdn`).
struct ConsolePlaybackRoutes {
    let store: any JobStore & PlaybackStore
    let target: any OutputTarget
    let snapshot: ConsoleSnapshot
    let logger: Logger

    func addRoutes(to router: some RouterMethods<ConsoleRequestContext>) {
        router.post("/console/jobs/playback", use: change)
    }

    /// `POST /console/jobs/playback`: `id`, `policy` (`public` or `signed`), `back`. Answers `303`
    /// back to the page with a notice, or JSON `{"result", "purge"}` to a script.
    func change(_ request: Request, context: ConsoleRequestContext) async throws -> Response {
        let identity = try context.requireIdentity()
        let form = try await request.decode(as: PlaybackForm.self, context: context)
        guard let policy = form.policy.flatMap(PlaybackPolicy.init(rawValue:)) else { return .problem(.badRequest, "policy: public or signed") }
        let outcome = try await PlaybackChange(store: store, target: target).set(form.id, policy)
        snapshot.wake()
        logger.notice("console: playback", metadata: ["role": "\(identity.role.rawValue)", "token": "\(identity.tokenHash)", "id": "\(form.id)",
                                                      "playback": "\(policy.rawValue)", "outcome": "\(outcome)"])
        let (status, result, purge): (HTTPResponse.Status, String, [String]) = switch outcome {
        case .changed(let purge): (.ok, "changed", purge)
        case .unknown: (.notFound, "unknown", [])
        case .notPublished: (.conflict, "not_published", [])
        }
        if request.wantsJSON { return .json(["result": result, "playback": policy.rawValue, "purge": purge.joined(separator: "\n")], status: status) }
        guard status == .ok else { return .problem(status, "\(form.id): \(result == "unknown" ? "no such video" : "not published yet")") }
        return .seeOther(form.back + (form.back.contains("?") ? "&" : "?") + "playback=\(policy.rawValue)")
    }
}

/// `POST /console/jobs/playback`'s form.
struct PlaybackForm: Decodable {
    var id: String
    var policy: String?
    var back: String

    enum CodingKeys: String, CodingKey { case id, policy, back }

    init(from decoder: any Decoder) throws {
        let fields = try decoder.container(keyedBy: CodingKeys.self)
        id = try fields.text(.id) ?? ""
        policy = try fields.text(.policy)
        back = ConsoleFormDecoder.back(try fields.text(.back))
    }
}
