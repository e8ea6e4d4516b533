import Foundation
import Ingest
import Transcode

extension FleetUploadStore {
    /// The job's row in the queue when there is one (`queued`; `running` is `processing`, with
    /// the running attempt's progress;
    /// `published` is `completed`, with URLs under the published version), else the upload's row.
    func status(_ id: String) async throws -> JobStatusReport? {
        if let job = try await jobs.job(id) {
            return JobStatusReport(job) { path in job.output.map { url($0, job.place, path) } }
        }
        guard let row = try await rows.read(id, part: 1), !row.terminated else { return nil }
        if row.enqueued { return JobStatusReport(id: id, state: .queued) }
        return JobStatusReport(id: id, state: .uploading, progress: JobSnapshot.percent(row.length > 0 ? Double(row.offset) / Double(row.length) : 0))
    }

    /// `path` where the job plays (`place`, in the published version `output`,
    /// `s3://bucket/cdn/<id>/<version>`): under the public URL when one is given, else as an
    /// `s3://` URL.
    private func url(_ output: String, _ place: PlaybackPlace?, _ path: String) -> String {
        if let publicURL, let place { return place.url(path, cdnURL: publicURL) }
        return "\(output)/\(path)"
    }
}
