import Foundation
import Ingest
import Transcode

/// `GET /v1/jobs/{id}`: what the app shows while the user waits, read from the spool.
public struct JobStatusReport: Codable, Sendable, Equatable {
    public enum State: String, Codable, Sendable {
        case uploading, queued, processing, completed, rejected, failed
    }

    public var id: String
    public var state: State
    /// 0–100: bytes received while uploading, the job's own progress while processing.
    public var progress: Int?
    public var reason: Reason?
    public var masterURL: String?
    public var posterURL: String?

    enum CodingKeys: String, CodingKey {
        case id, state, progress, reason, masterURL = "master_url", posterURL = "poster_url"
    }

    public struct Reason: Codable, Sendable, Equatable {
        public var code: String
        public var message: String
    }

    /// The job's status, or nil when neither an upload nor a job has this id (or its upload was terminated).
    /// `publicURL`: the CDN's base URL in front of `cdn` (completed jobs give URLs under it).
    static func read(id: String, uploads: UploadDirectory, cdn: String?, publicURL: String?) -> JobStatusReport? {
        let layout = uploads.layout
        var info = stat()
        func percent(_ fraction: Double) -> Int { Int((max(0, min(1, fraction)) * 100).rounded(.down)) }
        if lstat(layout.job(id, in: .archive), &info) == 0 {
            var report = JobStatusReport(id: id, state: .completed)
            let base = publicURL.map { "\($0)/\(id)" } ?? id
            let manifest = cdn.flatMap { JSONFile.read(ReadyManifest.self, from: "\($0)/\(id)/manifest.json") }
            report.masterURL = "\(base)/\(manifest?.master ?? "master.m3u8")"
            if let poster = manifest?.posters.max(by: { $0.width < $1.width }) { report.posterURL = "\(base)/\(poster.path)" }
            report.progress = 100
            return report
        }
        for (state, ended) in [(SpoolLayout.State.rejected, State.rejected), (.failed, .failed)] where lstat(layout.job(id, in: state), &info) == 0 {
            let reason = JSONFile.read(Ingest.Reason.self, from: "\(layout.job(id, in: state))/reason.json")
            return JobStatusReport(id: id, state: ended, reason: reason.map { Reason(code: $0.code, message: $0.message) })
        }
        if lstat(layout.job(id), &info) == 0 {
            guard JobLock.isHeld(directory: layout.job(id)) else { return JobStatusReport(id: id, state: .queued) }
            let progress = JSONFile.read(JobProgress.self, from: "\(layout.job(id))/progress.json")
            return JobStatusReport(id: id, state: .processing, progress: percent(progress?.fraction ?? 0))
        }
        guard let set = uploads.set(id), !set.terminated else { return nil }
        if uploads.isEnqueued(id) { return JobStatusReport(id: id, state: .queued) }  // between the rename and the spool's next look
        // Bytes received of those declared; files not created yet count as nothing received.
        let parts = uploads.parts(id)
        let received = parts.reduce(0) { $0 + Double($1.offset) }, declared = parts.reduce(0) { $0 + Double($1.length) }
        let share = Double(parts.count) / Double(set.files)
        return JobStatusReport(id: id, state: .uploading, progress: percent(declared > 0 ? received / declared * share : 0))
    }

    init(id: String, state: State, progress: Int? = nil, reason: Reason? = nil) {
        self.id = id
        self.state = state
        self.progress = progress
        self.reason = reason
    }
}
