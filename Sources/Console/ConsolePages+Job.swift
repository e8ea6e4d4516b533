import Foundation
import Ingest
import Playback
import Transcode

/// One job's page: its facts, attempts, history in words, limits, ladder and player.
extension ConsolePages {
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
}
