import Foundation
import Transcode

/// The events the app's backend hears about an upload, built from what the job left behind.
/// `data.uploadId` is the `id` from `upload.json`, absent for a plain video file.
public enum UploadEvent {
    /// `upload.published`: the essentials of the job's manifest, paths relative to the CDN root
    /// (where it plays: `place`), unsigned whatever its `playback` (the app signs them).
    public static func published(job: String, place: PlaybackPlace, manifest json: Data?, playback: PlaybackPolicy = .public,
                                 at now: Date = Date()) -> OutboxEvent {
        let manifest = json.flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] } ?? [:]
        func relative(_ value: Any?) -> String? { (value as? String).map { place.path($0) } }
        func images(_ value: Any?) -> [[String: any Sendable]] {
            ((value as? [[String: Any]]) ?? []).map { image in
                ["path": relative(image["path"]) ?? "", "width": image["width"] as? Int ?? 0, "height": image["height"] as? Int ?? 0]
            }
        }
        var data: [String: any Sendable] = [
            "id": job,
            "playback": playback.rawValue,
            "renditions": ((manifest["renditions"] as? [[String: Any]]) ?? []).map { rung -> [String: any Sendable] in
                ["name": rung["name"] as? String ?? "", "playlist": relative(rung["playlist"]) ?? "",
                 "width": rung["width"] as? Int ?? 0, "height": rung["height"] as? Int ?? 0,
                 "bandwidth": rung["bandwidth"] as? Int ?? 0]
            },
            "posters": images(manifest["posters"]),
        ]
        if let upload = manifest["uploadID"] as? String { data["uploadId"] = upload }
        if let captions = json.flatMap({ try? JSONDecoder().decode(ReadyManifest.self, from: $0) })?.captions {
            data["captions"] = Self.captions(captions, place: place)
        }
        if let master = relative(manifest["master"]) { data["master"] = master }
        if let mp4 = relative(manifest["mp4"]) { data["mp4"] = mp4 }
        if let duration = manifest["durationSeconds"] as? Double { data["durationSeconds"] = duration }
        if let preview = manifest["preview"] as? [String: Any] {
            var copy: [String: any Sendable] = [:]
            for (key, value) in preview {
                if key == "path" { copy[key] = relative(value) } else if let number = value as? Double { copy[key] = number }
            }
            data["preview"] = copy
        }
        return OutboxEvent(type: "upload.published", job: job, data: data, at: now)
    }

    /// `upload.playable`: the video can be played at `master` (relative to the CDN:
    /// `<job>/master.m3u8`, in a bucket the version's) while it is still being made
    /// (`upload.published` follows); `playableAfterSeconds` from its arrival. Once per attempt
    /// (`attempt`, its version): a retry's plays from its own version in a bucket.
    public static func playable(job: String, attempt: String, uploadID: String?, master: String, listedSeconds: Double,
                                afterSeconds: Double?, playback: PlaybackPolicy = .public, at now: Date = Date()) -> OutboxEvent {
        var data: [String: any Sendable] = ["id": job, "master": master, "listedSeconds": listedSeconds, "playback": playback.rawValue]
        if let uploadID { data["uploadId"] = uploadID }
        if let afterSeconds { data["playableAfterSeconds"] = afterSeconds }
        return OutboxEvent(type: "upload.playable", job: job, attempt: attempt, data: data, at: now)
    }

    /// `upload.captions`: video `job`'s caption tracks are now those of `manifest` (`ingestd
    /// captions`), listed by a new version of its master at `master` (players that loaded the
    /// one before keep playing it); paths from the CDN root, as `upload.published` gives them.
    public static func captionsChanged(job: String, place: PlaybackPlace, manifest: ReadyManifest, at now: Date = Date()) -> OutboxEvent {
        OutboxEvent(type: "upload.captions", job: job,
                    data: ["id": job, "master": place.path(manifest.master), "captions": captions(manifest.captions ?? [], place: place)], at: now)
    }

    static func captions(_ captions: [ReadyManifest.Caption], place: PlaybackPlace) -> [[String: any Sendable]] {
        captions.map { ["language": $0.language, "name": $0.name, "source": $0.source,
                        "playlist": place.path($0.playlist), "track": place.path($0.track)] }
    }

    /// `upload.playback_changed`: video `job`'s policy is now `playback` (`ingestd playback`, the
    /// console); `purge`: its paths a cache in front may hold, unsigned (what to drop once signed).
    public static func playbackChanged(job: String, playback: PlaybackPolicy, purge: [String], at now: Date = Date()) -> OutboxEvent {
        OutboxEvent(type: "upload.playback_changed", job: job, data: ["id": job, "playback": playback.rawValue, "purge": purge], at: now)
    }

    /// `upload.rejected` (bad upload, never retried) or `upload.failed` (retries ran out).
    public static func refused(_ type: String, job: String, uploadID: String?, code: String, message: String,
                               attempts: Int, at now: Date = Date()) -> OutboxEvent {
        var data: [String: any Sendable] = ["id": job, "reason": ["code": code, "message": message], "attempts": attempts]
        if let uploadID { data["uploadId"] = uploadID }
        return OutboxEvent(type: type, job: job, data: data, at: now)
    }
}
