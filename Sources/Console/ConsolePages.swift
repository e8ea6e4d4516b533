import Foundation
import Ingest
import Mustache
import Playback
import Transcode

/// Renders the console's pages from what the store said (values in, HTML out; no store call).
struct ConsolePages: Sendable {
    let library: MustacheLibrary
    /// Whether the store is the fleet's queue (hosts shown, and a banner when none is ready).
    let fleet: Bool
    /// Where players and posters are fetched from: `--cdn-url`, ending with `/`.
    let cdnURL: String?
    /// The CDN root the console serves itself under `/console/media/` (`--cdn`), when no `--cdn-url` is given.
    let mediaRoot: String?
    /// The limits a job's probe is shown against (`--preset`).
    let limits: Preset.Limits
    /// Signs the player's URLs of a signed video played from `cdnURL`.
    let playbackKey: PlaybackKey?
    /// The console reaches the CDN (`--cdn`): an operator may change a video's policy.
    let canChangePlayback: Bool

    init(fleet: Bool, cdnURL: String?, mediaRoot: String? = nil, limits: Preset.Limits, playbackKey: PlaybackKey? = nil,
         canChangePlayback: Bool = false) throws {
        self.playbackKey = playbackKey
        self.canChangePlayback = canChangePlayback
        var library = MustacheLibrary()
        for (name, text) in ConsoleTemplates.all { try library.register(text, named: name) }
        self.library = library
        self.fleet = fleet
        self.limits = limits
        self.mediaRoot = mediaRoot
        self.cdnURL = cdnURL.map { $0.hasSuffix("/") ? $0 : $0 + "/" }
    }

    func render(_ template: String, _ values: [String: Any]) -> String {
        library.render(Self.present(values) ?? [:], withTemplate: template) ?? ""
    }

    /// `value` without its nil entries (Mustache would print "nil" for a nil inside `Any`), so
    /// a section over an absent value renders nothing.
    static func present(_ value: Any) -> Any? {
        let mirror = Mirror(reflecting: value)
        if mirror.displayStyle == .optional { return mirror.children.first.flatMap { present($0.value) } }
        if let dictionary = value as? [String: Any] { return dictionary.compactMapValues { present($0) } }
        if let array = value as? [[String: Any]] { return array.compactMap { present($0) } }
        return value
    }

    /// The frame around every page: tabs with the shared counts, who is logged in, a banner.
    func page(title: String, body: String, live: String, shared: ConsoleSnapshot.Shared, identity: ConsoleIdentity,
              tab: String?, notice: String?) -> String {
        render("page", [
            "title": title, "body": body, "live": live, "version": shared.version, "role": identity.role.rawValue,
            "tabs": tabs(shared.overview, current: tab), "banner": banner(shared.overview) as Any, "notice": notice as Any,
            "taken": Self.time(shared.takenAt), "appVersion": IngestdVersion.current,
        ])
    }

    func tabs(_ overview: JobOverview, current: String?) -> [[String: Any]] {
        let counted: [(String, String, Int?)] = [("", "overview", nil), ("all", "all", nil)]
            + JobSnapshot.State.allCases.map { ($0.rawValue, $0.rawValue, overview.states[$0]) }
        return counted.map { key, label, count in
            ["href": key.isEmpty ? "/console/" : key == "all" ? "/console/jobs" : "/console/jobs?state=\(key)", "label": label,
             "key": key, "count": count.map { Self.count($0, cap: overview.cap) } as Any,
             "class": key == current ? "current" : ""]
        }
    }

    /// `12 345`, or `100 000+` at the cap.
    static func count(_ count: Int, cap: Int) -> String { count >= cap ? "\(cap)+" : "\(count)" }

    /// The SSE payload's counts, by tab key.
    static func counts(_ overview: JobOverview) -> [String: String] {
        Dictionary(uniqueKeysWithValues: JobSnapshot.State.allCases.map { ($0.rawValue, count(overview.states[$0], cap: overview.cap)) })
    }

    /// Why no upload would be processed now, if so: no worker host ready (the fleet).
    func banner(_ overview: JobOverview) -> String? {
        guard fleet else { return nil }
        let live = overview.hosts.filter { Date().timeIntervalSince($0.seenAt) < ConsoleServer.hostGone }
        if live.isEmpty { return "No worker host has reported in the last \(Int(ConsoleServer.hostGone)) s: nothing is being processed." }
        if !live.contains(where: \.ready) { return "No worker host is ready: \(live.compactMap(\.problem).first ?? "all are draining")." }
        return nil
    }

    func rows(_ rows: [JobRow], canRetry: Bool = true, now: Date = Date()) -> [[String: Any]] {
        rows.map { row in
            ["id": row.id, "state": row.state.rawValue, "input": row.input, "host": row.host ?? "", "attempts": row.attempts,
             "code": row.code ?? "", "retryable": canRetry && row.state != .deleted, "playable": row.playable,
             "progress": row.progress.map { "\($0) %" } as Any,
             "created": Self.age(row.createdAt, now: now), "createdISO": Self.time(row.createdAt),
             "changed": Self.age(row.updatedAt, now: now), "changedISO": Self.time(row.updatedAt)]
        }
    }

    func rowsHTML(_ rows: [JobRow], canRetry: Bool) -> String { render("rows", ["rows": self.rows(rows, canRetry: canRetry)]) }

    /// A list page; `canRetry`: the viewer may act (an `operate` token), so the boxes and
    /// buttons are shown (the server checks the role again on the write).
    func jobs(_ rows: [JobRow], filter: ConsoleFilter, next: JobCursor?, matching: Int?, canRetry: Bool) -> String {
        var values: [String: Any] = [
            "rows": self.rows(rows, canRetry: canRetry), "back": filter.url(after: filter.after), "next": next.map { filter.url(after: $0) } as Any,
            "filter": ["state": filter.state?.rawValue ?? "", "q": filter.text ?? "", "host": filter.host ?? "", "code": filter.code ?? "",
                       "attempts": filter.minAttempts.map(String.init) ?? "", "since": filter.since ?? ""],
            "sinceOptions": ConsoleFilter.sinceChoices.map { ["value": $0.value, "label": $0.label, "selected": $0.value == (filter.since ?? "")] },
        ]
        if canRetry, rows.contains(where: { $0.state != .deleted }) {
            values["deleteSelected"] = ["codes": DeletionCode.allCases.map { ["code": $0.rawValue] }]
        }
        if canRetry, rows.contains(where: { $0.state == .failed || $0.state == .rejected }) || matching != nil {
            var retry: [String: Any] = ["rejected": filter.state == .rejected ? "1" : (rows.contains { $0.state == .rejected } ? "1" : "")]
            if let matching, matching > 0 { retry["all"] = ["count": matching] }
            values["retry"] = retry
        }
        return render("jobs", values)
    }

    func overview(_ shared: ConsoleSnapshot.Shared, window: ActivityWindow, now: Date = Date()) -> String {
        let overview = shared.overview
        return render("overviewBody", [
            "activity": shared.activity[window].map { activity(of: $0) } as Any,
            "windows": ActivityWindow.allCases.map { ["href": $0 == .hour ? "/console/" : "/console/?window=\($0.rawValue)", "label": "last \($0.rawValue)",
                                                      "current": $0 == window] },
            "failures": overview.failures.map { ["state": $0.state.rawValue, "code": $0.code, "lastHour": $0.lastHour, "lastDay": $0.lastDay] },
            "leases": overview.leases.map { lease in
                ["id": lease.id, "holder": lease.holder, "token": lease.token,
                 "expires": lease.expiresAt.map { "\(Int($0.timeIntervalSince(now).rounded())) s" } ?? "when its process ends"]
            },
            "fleet": fleet,
            "hosts": overview.hosts.map { host in
                let gone = now.timeIntervalSince(host.seenAt) >= ConsoleServer.hostGone
                return ["name": host.name, "ready": gone ? "gone" : host.ready ? "ready" : "not ready: \(host.problem ?? "")",
                        "seen": Self.age(host.seenAt, now: now), "running": host.running, "version": host.version,
                        "started": Self.age(host.startedAt, now: now), "class": gone ? "gone" : ""]
            },
        ])
    }

    /// A window's charts, its totals in words, and a row per host.
    func activity(of activity: JobActivity) -> [String: Any] {
        func figures(_ tally: ActivityTally) -> [String: Any] {
            ["published": tally.published, "rejected": tally.rejected, "failed": tally.failed, "playable": tally.playable,
             "p50": tally.playableP50.map(ActivityChart.seconds) ?? "–", "p95": tally.playableP95.map(ActivityChart.seconds) ?? "–"]
        }
        return ["window": activity.window.rawValue, "svg": ActivityChart(activity: activity).svg, "total": figures(activity.total),
                "queued": activity.buckets.last?.depth ?? 0,
                "hosts": activity.hosts.map { host in figures(host.total).merging(["name": host.name, "spark": ActivityChart.sparkline(host)]) { $1 } }]
    }

    func login(message: String?, back: String) -> String { render("login", ["message": message as Any, "back": back]) }

    static func time(_ date: Date) -> String { IngestdDate.string(from: date) }

    /// `4 s ago`, `12 min ago`, `3 h ago`, `2 d ago`.
    static func age(_ date: Date, now: Date) -> String {
        let seconds = max(0, Int(now.timeIntervalSince(date)))
        switch seconds {
        case ..<120: return "\(seconds) s ago"
        case ..<7_200: return "\(seconds / 60) min ago"
        case ..<172_800: return "\(seconds / 3_600) h ago"
        default: return "\(seconds / 86_400) d ago"
        }
    }
}
