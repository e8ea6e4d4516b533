import Foundation
import Ingest

/// One attempt of a job as its history tells it: who ran it, when, how it ended, why, and the
/// job process's last lines. Both stores' events: an attempt starts at `attempt` (the spool:
/// `pid`) or `claimed` (the queue: `worker`), and ends at the next `published`, `rejected`,
/// `failed`, `retry`, `released`, `interrupted` or `lease_lost`.
struct AttemptRow: Equatable {
    var number: Int?
    var host: String?
    var started: Date
    var ended: Date?
    /// The end event's name; nil while it runs (or when its end was never recorded).
    var result: String?
    var code: String?
    var log: String?

    static let ends: Set<String> = ["published", "rejected", "failed", "retry", "released", "interrupted", "lease_lost"]

    /// The attempts in `history`, oldest first.
    static func attempts(in history: [JobHistoryEvent]) -> [AttemptRow] {
        var rows: [AttemptRow] = []
        for event in history {
            let fields = (try? JSONSerialization.jsonObject(with: Data(event.data.utf8)) as? [String: Any]) ?? [:]
            func number(_ key: String) -> Int? { (fields[key] as? Int) ?? (fields[key] as? String).flatMap { Int($0) } }
            if event.event == "attempt" || event.event == "claimed" {
                let host = fields["worker"] as? String ?? number("pid").map { "\(HostName.current) (pid \($0))" }
                rows.append(AttemptRow(number: number("attempt"), host: host, started: event.at))
            } else if ends.contains(event.event), let last = rows.indices.last, rows[last].ended == nil {
                rows[last].ended = event.at
                rows[last].result = event.event
                rows[last].code = fields["code"] as? String
                rows[last].log = fields["log"] as? String
            }
        }
        return rows
    }
}
