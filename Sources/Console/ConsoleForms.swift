import Ingest
import Hummingbird

/// Forms and queries through Hummingbird's `URLEncodedFormDecoder` (a list is `id[]=a&id[]=b`),
/// a form it cannot read refused with a `400`.
struct ConsoleFormDecoder: RequestDecoder {
    func decode<T: Decodable>(_ type: T.Type, from request: Request, context: some RequestContext) async throws -> T {
        try Self.decode(type, from: String(buffer: try await request.body.collect(upTo: context.maxUploadSize)))
    }

    /// `encoded` (a body, or a URL's query) as a `T`.
    static func decode<T: Decodable>(_ type: T.Type, from encoded: String) throws(ConsoleProblem) -> T {
        do {
            return try URLEncodedFormDecoder().decode(type, from: encoded)
        } catch {
            throw ConsoleProblem(.badRequest, "the form could not be read: \(error)")
        }
    }
}

extension Request {
    /// The URL's query as a `T`.
    func query<T: Decodable>(as type: T.Type) throws(ConsoleProblem) -> T { try ConsoleFormDecoder.decode(type, from: uri.query ?? "") }
}

extension KeyedDecodingContainer {
    /// The field's text; nil when absent or empty (a browser sends every input of a form).
    func text(_ key: Key) throws -> String? {
        guard let value = try decodeIfPresent(String.self, forKey: key), !value.isEmpty else { return nil }
        return value
    }
}

/// The query of a page: the list's filter, and the notice a retry's or a deletion's redirect left.
struct PageQuery: Decodable {
    var filter: ConsoleFilter
    /// `?retried=N&skipped=M`: "Retried N jobs; M skipped …"; `?deleted=N&skipped=M`: "Deleted …".
    var notice: String?
    /// The overview's charts: `?window=day`, else the last hour.
    var window: ActivityWindow = .hour

    enum CodingKeys: String, CodingKey { case retried, skipped, deleted, window, playback }

    init(from decoder: any Decoder) throws {
        filter = try ConsoleFilter(from: decoder)
        let fields = try decoder.container(keyedBy: CodingKeys.self)
        window = try fields.text(.window).flatMap(ActivityWindow.init(rawValue:)) ?? .hour
        if let deleted = try fields.text(.deleted).flatMap({ Int($0) }) {
            let skipped = try fields.text(.skipped).flatMap { Int($0) } ?? 0
            notice = "Deleted \(deleted) video\(deleted == 1 ? "" : "s"): fenced now, removed within a minute by the daemon or worker that owns the store"
                + (skipped > 0 ? "; \(skipped) skipped (deleted before, or no such job)." : ".")
            return
        }
        if let playback = try fields.text(.playback).flatMap(PlaybackPolicy.init(rawValue:)) {
            notice = playback == .signed ? "Signed: only signed URLs play it from the next request; caches in front were told what to purge."
                : "Public: every URL plays it from the next request."
            return
        }
        guard let retried = try fields.text(.retried).flatMap({ Int($0) }) else { return }
        let skipped = try fields.text(.skipped).flatMap { Int($0) } ?? 0
        notice = "Retried \(retried) job\(retried == 1 ? "" : "s")" + (skipped > 0 ? "; \(skipped) skipped (no longer failed or rejected)." : ".")
    }
}

/// `GET /console/events?view=…`: `overview`, `overview:day`, `tab:<state>` or `list`.
struct EventsQuery: Decodable {
    var view: String?
}

/// `/console/login`'s query (`back`) and form (`token`, `back`).
struct LoginForm: Decodable {
    var token: String?
    /// Where to go once logged in.
    var back: String

    enum CodingKeys: String, CodingKey { case token, back }

    init(from decoder: any Decoder) throws {
        let fields = try decoder.container(keyedBy: CodingKeys.self)
        token = try fields.text(.token)
        back = ConsoleFormDecoder.back(try fields.text(.back))
    }
}

/// `POST /console/jobs/retry`: `id[]` (one per job; a single `id` too) and `rejected=1`, or `action=all` with the
/// list's filter and `confirm=N`; `back`: the page to return to.
struct RetryForm: Decodable {
    var ids: [String]
    var rejected: Bool
    var all: Bool
    var confirm: String?
    var filter: ConsoleFilter
    var back: String

    enum CodingKeys: String, CodingKey { case id, rejected, action, confirm, back }

    init(from decoder: any Decoder) throws {
        filter = try ConsoleFilter(from: decoder)
        let fields = try decoder.container(keyedBy: CodingKeys.self)
        let listed = try? fields.decodeIfPresent([String].self, forKey: .id)
        ids = try (listed ?? fields.decodeIfPresent(String.self, forKey: .id).map { [$0] } ?? []).filter { !$0.isEmpty }
        rejected = try fields.text(.rejected) == "1"
        confirm = try fields.text(.confirm)
        all = try fields.text(.action) == "all" || (ids.isEmpty && confirm != nil)
        back = ConsoleFormDecoder.back(try fields.text(.back))
    }
}

extension ConsoleFormDecoder {
    /// Where to send the browser back to: a console page, nothing else (no open redirect).
    static func back(_ given: String?) -> String {
        guard let given, given.hasPrefix("/console/"), !given.contains("//"), !given.contains("\\") else { return "/console/jobs" }
        return given
    }
}
