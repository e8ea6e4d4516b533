import Foundation
import Ingest
import NIOPosix

/// Single host (`serve --spool`): uploads beside the spool (``UploadDirectory``), each finished
/// one renamed into `work/<id>` for `ingestd watch`; statuses read from the spool.
struct SpoolUploadStore: UploadStore {
    let directory: UploadDirectory
    let publicURL: String?

    func create(token: UploadToken, limit: Int64, length: Int64, metadata: UploadMetadata) async throws -> PartialUpload {
        try directory.create(token: token, limit: limit, length: length, metadata: metadata)
    }

    func find(_ id: String, part: Int) async throws -> PartialUpload? {
        if UploadToken.isValidID(id), directory.layout.isDeleted(id) {
            throw TusRefusal(.gone, "deleted", "job \(id) was deleted while it was uploaded; send nothing more")
        }
        guard let set = directory.set(id), !set.terminated, let upload = directory.read(id, part: part) else { return nil }
        if upload.isComplete { _ = try? directory.enqueueIfComplete(id) }
        return upload
    }

    func writer(_ upload: PartialUpload) async throws -> any UploadBodyWriter {
        try UploadWriter(upload, in: directory)
    }

    func terminate(_ id: String) async throws { try directory.terminate(id) }

    func status(_ id: String) async throws -> JobStatusReport? {
        JobStatusReport.read(id: id, uploads: directory, publicURL: publicURL)
    }

    var deletions: any DeletionStore { SpoolStore(layout: directory.layout) }

    func upkeep() async throws -> [String] {
        let expired = directory.sweep()
        for id in (try? FileManager.default.contentsOfDirectory(atPath: directory.root)) ?? [] {
            _ = try? directory.enqueueIfComplete(id)
        }
        return expired
    }
}
