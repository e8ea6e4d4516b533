import Foundation
import Ingest
import Transcode

extension FleetUploadStore {
    /// The job's row in the queue when there is one (`queued`; `running` is `processing`, with
    /// the running attempt's progress;
    /// `published` is `completed`, with URLs under the published version), else the upload's row.
    var deletions: any DeletionStore { jobs }

    func status(_ id: String) async throws -> JobStatusReport? {
        if let job = try await jobs.job(id) {
            return JobStatusReport(job) { path in job.place.map { url($0, path) } }
        }
        guard let row = try await rows.read(id, part: 1), !row.terminated else { return nil }
        if row.enqueued { return JobStatusReport(id: id, state: .queued) }
        return JobStatusReport(id: id, state: .uploading, progress: JobSnapshot.percent(row.length > 0 ? Double(row.offset) / Double(row.length) : 0))
    }

    /// `path` (from the CDN root of `place`): under the public URL when one is given, else as
    /// an `s3://` URL.
    private func url(_ place: PlaybackPlace, _ path: String) -> String {
        publicURL.map { PlaybackPlace.url(path, cdnURL: $0) } ?? "\(place.root)/\(path)"
    }
}
