import Foundation
import Ingest

/// An event of a job's history in words ("playable after 1.15 s (first segments 1.06 s)"),
/// for either store's events; the raw event stays one click away on the page.
enum HistorySentence {
    static func of(_ event: JobHistoryEvent) -> String {
        let fields = HistoryFields(event)
        let attempt = fields.number("attempt").map { "attempt \($0)" } ?? "the attempt"
        switch event.event {
        case "claimed" where fields.text("worker") != nil:
            return "\(attempt.capitalizedFirst) claimed by \(fields.text("worker")!)"
        case "claimed":
            return "Taken in from incoming/" + (fields.text("name").map { " as \($0)" } ?? "") + (fields.number("pid").map { " by the daemon (pid \($0))" } ?? "")
        case "queued":
            return "Queued" + (fields.text("input").map { " from \($0)" } ?? "")
        case "attempt":
            return "\(attempt.capitalizedFirst) started" + (fields.number("pid").map { " on \(HostName.current) (pid \($0))" } ?? "")
        case "progress":
            let percent = fields.double("fraction").map { String(format: "%.0f %%", $0 * 100) } ?? "?"
            return "Progress \(percent)" + (fields.double("speed").map { String(format: " at %.1f× real time", $0) } ?? "")
        case "playable":
            return playable(fields)
        case "published":
            return "Published" + (fields.text("output").map { " to \($0)" } ?? "")
                + (fields.double("duration").flatMap { $0 > 0 ? String(format: ": %.2f s of video", $0) : nil } ?? "")
        case "rejected", "failed":
            return "\(event.event.capitalizedFirst): \(reason(fields))"
        case "retry":
            return "\(attempt.capitalizedFirst) ended (\(reason(fields))); it will be tried again"
        case "retried":
            return "Retried by an operator" + (fields.text("from").map { " (it had \($0))" } ?? "")
        case "released":
            return "Released by its worker, which was stopping; queued again"
        case "interrupted":
            return "Interrupted: the daemon stopped during the attempt; queued again"
        case "lease_lost":
            return "Its worker's lease ran out; " + (fields.text("now") == "failed" ? "failed (no attempt left)" : "queued again")
        case "deleted":
            return "Deleted" + (fields.text("by").map { " by \($0)" } ?? "") + (fields.text("code").map { " (\($0))" } ?? "")
                + (fields.text("reason").map { ": \($0)" } ?? "")
        case "playback_changed":
            return "Made \(fields.text("playback") ?? "?") (who may play it)"
        case "captions_changed":
            let languages = (fields.values["languages"] as? [Any])?.compactMap { $0 as? String } ?? []
            return "Captions changed: " + (languages.isEmpty ? "none now" : languages.joined(separator: ", "))
        case "deletion_completed":
            return "Deletion completed" + (fields.number("purged").map { "; \($0) CDN paths to purge" } ?? "")
        default:
            return event.event.replacingOccurrences(of: "_", with: " ").capitalizedFirst
        }
    }

    /// "Playable after 1.15 s (job process 0.10 s, probe 0.05 s, first segments 1.06 s, shown 0.01 s)".
    static func playable(_ fields: HistoryFields) -> String {
        var text = "Playable" + (fields.double("playableAfterSeconds").map { String(format: " after %.2f s", $0) } ?? "")
        if let stages = fields.values["stages"] as? [String: Any] {
            let named = [("toJobProcess", "to the job process"), ("probe", "probe"), ("firstSegments", "first segments"), ("show", "shown")]
            let parts = named.compactMap { key, name in (stages[key] as? Double).map { String(format: "\(name) %.2f s", $0) } }
            if !parts.isEmpty { text += " (" + parts.joined(separator: ", ") + ")" }
        }
        if let listed = fields.double("listedSeconds") { text += String(format: "; %.0f s listed", listed) }
        return text
    }

    /// "corrupt_input: the file ends before its index (attempt 2)".
    static func reason(_ fields: HistoryFields) -> String {
        let code = fields.text("code") ?? "no reason recorded"
        return code + (fields.text("message").map { ": \($0)" } ?? "") + (fields.number("attempts").map { " (after \($0) attempt\($0 == 1 ? "" : "s"))" } ?? "")
    }
}

extension String {
    var capitalizedFirst: String { prefix(1).uppercased() + dropFirst() }
}
