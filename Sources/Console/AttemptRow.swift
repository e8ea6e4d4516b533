import Foundation
import Ingest

/// One attempt of a job as its history tells it: who ran it, how long it waited in the queue,
/// when, how it ended, why, and the job process's last lines. An attempt starts at the spool's
/// `attempt` or the queue's `claimed` (which names its `worker`; the spool's intake also logs
/// a `claimed`, the upload taken in from `incoming/`, which is no attempt), and ends at the
/// next `published`, `rejected`, `failed`, `retry`, `released`, `interrupted` or `lease_lost`.
struct AttemptRow: Equatable {
    var number: Int?
    var host: String?
    var started: Date
    /// Seconds from the job's last entry into the queue (queued, retried, released) to this start.
    var waited: TimeInterval?
    var ended: Date?
    /// The end event's name; nil while it runs (or when its end was never recorded).
    var result: String?
    var code: String?
    var log: String?

    static let ends: Set<String> = ["published", "rejected", "failed", "retry", "released", "interrupted", "lease_lost"]
    /// Events after which a job waits in the queue.
    static let entries: Set<String> = ["queued", "retried", "retry", "released", "interrupted", "lease_lost"]

    /// Whether `event` starts an attempt.
    static func starts(_ event: JobHistoryEvent, _ fields: [String: Any]) -> Bool {
        event.event == "attempt" || (event.event == "claimed" && fields["worker"] != nil)
    }

    /// The attempts in `history`, oldest first.
    static func attempts(in history: [JobHistoryEvent]) -> [AttemptRow] {
        var rows: [AttemptRow] = []
        var enteredQueue: Date?
        for event in history {
            let fields = HistoryFields(event)
            if starts(event, fields.values) {
                let host = fields.text("worker") ?? fields.number("pid").map { "\(HostName.current) (pid \($0))" }
                rows.append(AttemptRow(number: fields.number("attempt"), host: host, started: event.at,
                                       waited: enteredQueue.map { event.at.timeIntervalSince($0) }))
                enteredQueue = nil
            } else if ends.contains(event.event), let last = rows.indices.last, rows[last].ended == nil {
                rows[last].ended = event.at
                rows[last].result = event.event
                rows[last].code = fields.text("code")
                rows[last].log = fields.text("log")
            }
            if entries.contains(event.event) { enteredQueue = event.at }
        }
        return rows
    }
}

/// An event's JSON fields, read leniently (the queue writes some numbers as text).
struct HistoryFields {
    let values: [String: Any]

    init(_ event: JobHistoryEvent) {
        values = (try? JSONSerialization.jsonObject(with: Data(event.data.utf8)) as? [String: Any]) ?? [:]
    }

    func text(_ key: String) -> String? { values[key] as? String }

    func number(_ key: String) -> Int? { (values[key] as? Int) ?? text(key).flatMap { Int($0) } }

    func double(_ key: String) -> Double? { (values[key] as? Double) ?? text(key).flatMap { Double($0) } }
}
