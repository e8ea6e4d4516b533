import Foundation
import Ingest

/// The list's filter as the URL keeps it: `state`, `q`, `host`, `code`, `attempts`, `since`
/// (`1h`, `1d`, `7d`) and `after` (the keyset cursor).
struct ConsoleFilter: Sendable, Equatable, Decodable {
    var state: JobSnapshot.State?
    var text: String?
    var host: String?
    var code: String?
    var minAttempts: Int?
    var since: String?
    var after: JobCursor?

    static let sinceChoices: [(value: String, label: String, seconds: Double)] = [
        ("", "any time", 0), ("1h", "1 hour", 3_600), ("1d", "1 day", 86_400), ("7d", "7 days", 7 * 86_400),
    ]

    enum CodingKeys: String, CodingKey { case state, q, host, code, attempts, since, after }

    init(from decoder: any Decoder) throws {
        let fields = try decoder.container(keyedBy: CodingKeys.self)
        state = try fields.text(.state).flatMap(JobSnapshot.State.init(rawValue:))
        text = try fields.text(.q).map { String($0.prefix(200)) }
        host = try fields.text(.host).map { String($0.prefix(200)) }
        code = try fields.text(.code).map { String($0.prefix(100)) }
        minAttempts = try fields.text(.attempts).flatMap { Int($0) }.map { max(0, min($0, 1_000)) }
        since = try fields.text(.since).flatMap { value in Self.sinceChoices.contains { $0.value == value } ? value : nil }
        after = try fields.text(.after).flatMap(JobCursor.init)
    }

    func query(limit: Int, now: Date = Date()) -> JobQuery {
        let seconds = Self.sinceChoices.first { $0.value == since }?.seconds ?? 0
        return JobQuery(state: state, text: text, host: host, code: code, minAttempts: minAttempts,
                        since: seconds > 0 ? now.addingTimeInterval(-seconds) : nil, after: after, limit: limit)
    }

    /// The page's URL with this filter (and `after` replaced).
    func url(after cursor: JobCursor? = nil) -> String {
        var items: [URLQueryItem] = []
        func add(_ name: String, _ value: String?) { if let value, !value.isEmpty { items.append(URLQueryItem(name: name, value: value)) } }
        add("state", state?.rawValue)
        add("q", text)
        add("host", host)
        add("code", code)
        add("attempts", minAttempts.map(String.init))
        add("since", since)
        add("after", cursor?.text)
        var components = URLComponents()
        components.path = "/console/jobs"
        components.queryItems = items.isEmpty ? nil : items
        return components.string ?? "/console/jobs"
    }

    /// Only a state (or none), from the first page: what the shared snapshot holds.
    var isTab: Bool { query(limit: 1).isTab }

    /// The SSE view name of this page: `tab:<state>` for a tab, `list` otherwise.
    var view: String { isTab ? "tab:\(state?.rawValue ?? "")" : "list" }

    /// The ids of the jobs this filter matches from its first page on, at most `cap`.
    func ids(in store: any JobBrowser, cap: Int) async throws -> [String] {
        var query = self.query(limit: 1_000)
        query.after = nil
        var ids: [String] = []
        while ids.count < cap {
            let page = try await store.jobs(query)
            ids += page.rows.map(\.id)
            guard let next = page.next else { break }
            query.after = next
        }
        return Array(ids.prefix(cap))
    }
}
