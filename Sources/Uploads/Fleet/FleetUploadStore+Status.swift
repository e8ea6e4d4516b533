import Foundation
import PostgresNIO
import Transcode

extension FleetUploadStore {
    /// The job's row in the queue when there is one (`queued`; `running` is `processing`, with
    /// the running attempt's progress;
    /// `published` is `completed`, with URLs under the published version), else the upload's row.
    func status(_ id: String) async throws -> JobStatusReport? {
        if let job = try await rows.job(id) {
            switch job.state {
            case "queued": return JobStatusReport(id: id, state: .queued)
            case "running": return JobStatusReport(id: id, state: .processing, progress: try await rows.progress(id) ?? 0)
            case "published":
                var report = JobStatusReport(id: id, state: .completed, progress: 100)
                let manifest = job.manifest.flatMap { try? JSONDecoder().decode(ReadyManifest.self, from: Data($0.utf8)) }
                if let output = job.output {
                    report.masterURL = url(output, manifest?.master ?? "master.m3u8")
                    if let poster = manifest?.posters.max(by: { $0.width < $1.width }) { report.posterURL = url(output, poster.path) }
                }
                return report
            default:
                let reason = job.reason.flatMap { try? JSONDecoder().decode(JobStatusReport.Reason.self, from: Data($0.utf8)) }
                return JobStatusReport(id: id, state: job.state == "rejected" ? .rejected : .failed, reason: reason)
            }
        }
        guard let row = try await rows.read(id, part: 1), !row.terminated else { return nil }
        if row.enqueued { return JobStatusReport(id: id, state: .queued) }
        let fraction = row.length > 0 ? Double(row.offset) / Double(row.length) : 0
        return JobStatusReport(id: id, state: .uploading, progress: Int((max(0, min(1, fraction)) * 100).rounded(.down)))
    }

    /// `path` in the published version `output` (`s3://bucket/cdn/<id>/<version>`): under the
    /// public URL when the CDN prefix is known and one is given, else as an `s3://` URL.
    private func url(_ output: String, _ path: String) -> String {
        let full = "\(output)/\(path)"
        if let publicURL, let cdn, full.hasPrefix(cdn + "/") { return publicURL + full.dropFirst(cdn.count) }
        return full
    }
}

extension FleetUploadRows {
    /// The running attempt's percent (PostgresStore.progress): nil before its first report, or
    /// when what is there is an earlier attempt's or the job no longer runs.
    func progress(_ id: String) async throws -> Int? {
        try await client.withConnection(within: timeout) { [logger] connection in
            let rows = try await connection.query("""
                SELECT progress FROM ingestd_jobs WHERE id = \(id) AND state = 'running' AND progress_token = token
                """, logger: logger)
            for try await progress in rows.decode(Int?.self) { return progress }
            return nil
        }
    }
}
