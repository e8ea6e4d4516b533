import Foundation
import Ingest

/// `application/x-www-form-urlencoded` fields (a form's body, or a URL's query), in order, a
/// name possibly repeated (`id=a&id=b`).
struct FormFields: Sendable {
    let pairs: [(name: String, value: String)]

    init(_ encoded: String) {
        func decoded(_ text: Substring) -> String {
            String(text).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? ""
        }
        pairs = encoded.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (decoded(parts[0]), parts.count > 1 ? decoded(parts[1]) : "")
        }
    }

    /// The first non-empty value of `name`.
    subscript(_ name: String) -> String? { pairs.first { $0.name == name && !$0.value.isEmpty }?.value }

    func all(_ name: String) -> [String] { pairs.filter { $0.name == name && !$0.value.isEmpty }.map(\.value) }
}

/// The list's filter as the URL keeps it: `state`, `q`, `host`, `code`, `attempts`, `since`
/// (`1h`, `1d`, `7d`) and `after` (the keyset cursor).
struct ConsoleFilter: Sendable, Equatable {
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

    init(_ fields: FormFields) {
        state = fields["state"].flatMap(JobSnapshot.State.init(rawValue:))
        text = fields["q"].map { String($0.prefix(200)) }
        host = fields["host"].map { String($0.prefix(200)) }
        code = fields["code"].map { String($0.prefix(100)) }
        minAttempts = fields["attempts"].flatMap { Int($0) }.map { max(0, min($0, 1_000)) }
        since = fields["since"].flatMap { value in Self.sinceChoices.contains { $0.value == value } ? value : nil }
        after = fields["after"].flatMap(JobCursor.init)
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
}
