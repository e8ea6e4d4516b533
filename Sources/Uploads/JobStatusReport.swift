import Foundation
import Ingest
import Transcode

/// `GET /v1/jobs/{id}`: what the app shows while the user waits, read from the spool.
public struct JobStatusReport: Codable, Sendable, Equatable {
    public enum State: String, Codable, Sendable {
        case uploading, queued, processing, completed, rejected, failed, deleted
    }

    public var id: String
    public var state: State
    /// 0–100: bytes received while uploading, the job's own progress while processing.
    public var progress: Int?
    public var reason: Reason?
    /// True while a processing video can already be played (at `master_url`).
    public var playable: Bool?
    public var masterURL: String?
    public var posterURL: String?
    public var mp4URL: String?
    /// `signed`: the URLs above play only once the app's backend signs them (docs/OUTPUT.md).
    public var playback: PlaybackPolicy?
    /// A completed video's caption tracks (`ingestd captions` changes them).
    public var captions: [Caption]?

    public struct Caption: Codable, Sendable, Equatable {
        public var language: String
        public var name: String
        /// `app`: the upload's or `ingestd captions`'.
        public var source: String
        /// The whole track as one WebVTT file (the subtitles playlist is in the master).
        public var trackURL: String?

        enum CodingKeys: String, CodingKey { case language, name, source, trackURL = "track_url" }
    }

    enum CodingKeys: String, CodingKey {
        case id, state, progress, reason, playable, masterURL = "master_url", posterURL = "poster_url", mp4URL = "mp4_url", playback, captions
    }

    /// The app's words for a job its store knows, mapped here once: running is `processing`,
    /// published is `completed` (with its master and the poster that stands for it at `url`:
    /// a path from the CDN root).
    init(_ job: JobSnapshot, url: (_ path: String) -> String?) {
        let states: [JobSnapshot.State: State] = [.queued: .queued, .running: .processing, .published: .completed,
                                                   .rejected: .rejected, .failed: .failed, .deleted: .deleted]
        self.init(id: job.id, state: states[job.state]!, progress: job.progress)
        playback = job.state == .deleted ? nil : job.playback
        let place = job.place ?? PlaybackPlace(root: "", id: job.id)
        if job.state == .running, job.playable == true {
            playable = true
            masterURL = url(place.master)
        }
        guard job.state == .published else {
            reason = [.rejected, .failed, .deleted].contains(job.state) ? job.reason : nil
            return
        }
        masterURL = url(place.path(job.manifest?.master ?? "master.m3u8"))
        mp4URL = job.manifest.flatMap { url(place.path($0.mp4)) }
        posterURL = job.manifest.flatMap { place.poster(among: $0.posters) }.flatMap(url)
        captions = job.manifest?.captions.map { list in
            list.map { Caption(language: $0.language, name: $0.name, source: $0.source, trackURL: url(place.path($0.track))) }
        }
    }

    /// The job's status, or nil when neither an upload nor a job has this id (or its upload was terminated).
    /// `publicURL`: the CDN's base URL (completed jobs give URLs under it; else paths from the CDN root).
    static func read(id: String, uploads: UploadDirectory, publicURL: String?) -> JobStatusReport? {
        if let job = SpoolStore.job(id, layout: uploads.layout) {
            return JobStatusReport(job) { path in publicURL.map { PlaybackPlace.url(path, cdnURL: $0) } ?? path }
        }
        guard let set = uploads.set(id), !set.terminated else { return nil }
        if uploads.isEnqueued(id) { return JobStatusReport(id: id, state: .queued) }  // between the rename and the spool's next look
        // Bytes received of those declared; files not created yet count as nothing received.
        let parts = uploads.parts(id)
        let received = parts.reduce(0) { $0 + Double($1.offset) }, declared = parts.reduce(0) { $0 + Double($1.length) }
        let share = Double(parts.count) / Double(set.files)
        return JobStatusReport(id: id, state: .uploading, progress: JobSnapshot.percent(declared > 0 ? received / declared * share : 0))
    }

    init(id: String, state: State, progress: Int? = nil, reason: Reason? = nil) {
        self.id = id
        self.state = state
        self.progress = progress
        self.reason = reason
    }
}
