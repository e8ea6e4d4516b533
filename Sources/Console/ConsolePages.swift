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

    func job(_ job: JobSnapshot, history: [JobHistoryEvent], canRetry: Bool, now: Date = Date()) -> String {
        var values: [String: Any] = [
            "id": job.id, "state": job.state.rawValue, "attempts": job.attempts, "playable": job.playable == true,
            "ahead": job.aheadSeconds.map { String(format: "%.1f s", $0) } as Any,
            "progress": (job.state == .running ? job.progress.map { "\($0) %" } : nil) as Any,
            "output": job.output as Any,
            "history": history.map { historyRow($0, now: now) },
            "attemptRows": AttemptRow.attempts(in: history).map { attempt in
                ["number": attempt.number.map(String.init) ?? "", "host": attempt.host ?? "", "started": Self.age(attempt.started, now: now),
                 "startedISO": Self.time(attempt.started), "waited": attempt.waited.map { Self.seconds($0) } ?? "",
                 "took": attempt.ended.map { Self.seconds($0.timeIntervalSince(attempt.started)) } ?? "running",
                 "result": attempt.result ?? "", "code": attempt.code ?? "", "log": attempt.log as Any]
            },
        ]
        if let reason = job.reason { values["reason"] = ["code": reason.code, "message": reason.message] }
        if canRetry, job.state == .failed || job.state == .rejected {
            values["retry"] = ["rejected": job.state == .rejected ? "1" : ""]
        }
        if canRetry, job.state != .deleted {
            values["delete"] = ["codes": DeletionCode.allCases.map { ["code": $0.rawValue] }]
        }
        if job.state != .deleted { values["playback"] = (job.playback ?? .public).rawValue }
        if canRetry, canChangePlayback, job.state == .published {
            values["changePlayback"] = ["to": job.playback == .signed ? "public" : "signed"]
        }
        if let deletion = job.deletion {
            values["deletion"] = ["at": Self.time(deletion.at), "code": deletion.reason.code.rawValue, "text": deletion.reason.text,
                                  "by": deletion.reason.by, "state": deletion.completedAt == nil ? "being completed" : "complete",
                                  "purged": deletion.purge.count]
        }
        if let manifest = job.manifest {
            values["limits"] = ["rows": limits(manifest)]
            values["ladder"] = ["renditions": manifest.renditions.map { rung in
                ["name": rung.name, "size": "\(rung.width)×\(rung.height)", "bitrate": "\(rung.averageBandwidth / 1000) kbit/s",
                 "bytes": String(format: "%.2f MB", Double(rung.averageBandwidth) * manifest.durationSeconds / 8e6),
                 "segments": rung.segments, "codecs": rung.codecs]
            }]
            if let place = job.place, let url = mediaURL(job, place), job.state == .published || job.playable == true {
                values["media"] = ["master": url(manifest.master), "poster": manifest.posters.max { $0.width < $1.width }.map { url($0.path) } as Any]
            }
        } else if let place = job.place, let url = mediaURL(job, place), job.playable == true {
            values["media"] = ["master": url("master.m3u8")]
        }
        return render("job", values)
    }

    /// How a path of the video (relative to its place) is fetched by the page: through the
    /// console's own `/console/media/`, or from `--cdn-url`, signed for ten minutes when the
    /// video is (nil: it cannot be played here, a signed video without `--playback-key-file`).
    func mediaURL(_ job: JobSnapshot, _ place: PlaybackPlace) -> ((String) -> String)? {
        guard let base = mediaBase(place) else { return nil }
        guard job.playback == .signed, cdnURL != nil else { return { place.url($0, cdnURL: base) } }
        guard let key = playbackKey else { return nil }
        let expires = PlaybackToken.expiry(now: Date(), lifetime: 600)
        return { PlaybackToken.url(base: base, place: place, relative: $0, expires: expires, key: key) }
    }

    /// Where a job's player and poster are fetched from: `--cdn-url`, else the console's own
    /// `/console/media/` when the video lies under the CDN it was given; nil: no player.
    func mediaBase(_ place: PlaybackPlace?) -> String? {
        if let cdnURL { return cdnURL }
        guard let mediaRoot, let place, place.root == mediaRoot else { return nil }
        return "/console/media/"
    }

    /// One event in words, its time relative (the exact one on hover), and the raw event one
    /// click away (without the job process's last lines: the attempts table shows them).
    func historyRow(_ event: JobHistoryEvent, now: Date) -> [String: Any] {
        var row: [String: Any] = ["at": Self.age(event.at, now: now), "atISO": Self.time(event.at), "event": event.event,
                                  "text": HistorySentence.of(event), "data": event.data]
        if var fields = try? JSONSerialization.jsonObject(with: Data(event.data.utf8)) as? [String: Any],
           let log = fields.removeValue(forKey: "log") as? String,
           let rest = try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys, .withoutEscapingSlashes]) {
            row["data"] = String(decoding: rest, as: UTF8.self) + " (and the job process's last \(log.utf8.count) bytes)"
        }
        return row
    }

    /// `0.42 s`, `12.3 s`, `4 min 10 s`.
    static func seconds(_ value: TimeInterval) -> String {
        value < 10 ? String(format: "%.2f s", value) : value < 120 ? String(format: "%.1f s", value) : "\(Int(value) / 60) min \(Int(value) % 60) s"
    }

    /// The probe against the preset's limits: bytes, duration, each source's picture.
    func limits(_ manifest: ReadyManifest) -> [[String: String]] {
        let bytes = manifest.sources.reduce(Int64(0)) { $0 + $1.sizeBytes } + (manifest.music?.sizeBytes ?? 0)
        let seconds = manifest.sources.reduce(0) { $0 + $1.durationSeconds }
        var rows: [[String: String]] = [
            ["name": "bytes", "value": String(format: "%.1f MB", Double(bytes) / 1e6), "limit": String(format: "%.0f MB", Double(limits.maxBytes) / 1e6)],
            ["name": "duration", "value": String(format: "%.2f s", seconds) + (manifest.trimmedToLimit ? " (trimmed)" : ""),
             "limit": String(format: "%.0f s", limits.maxDurationSeconds)],
        ]
        for (index, source) in manifest.sources.enumerated() {
            guard let video = source.video else { continue }
            rows.append(["name": "clip \(index + 1) picture", "value": "\(video.width)×\(video.height) at \(String(format: "%.2f", video.frameRate)) fps",
                         "limit": "\(limits.maxPixels) pixels, \(String(format: "%.0f", limits.maxFrameRate)) fps"])
        }
        return rows
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
