import Foundation
import Ingest
import Logging
import ObjectStorage
import Transcode

extension TranscodeJob {
    /// Runs the job with its input and/or destination in a bucket (`s3://…`): the input is
    /// fetched into private scratch first (``ObjectInput``); the output is transcoded into
    /// scratch, uploaded under a new version prefix and published by creating the output's
    /// pointer (``BucketPublisher``). As a local OUT must not exist, an output that already has
    /// a pointer is refused (`reprocess` replaces pointers). Returns the manifest and where the
    /// output is (the version prefix for a bucket).
    public func run(storage client: S3Client, logger: Logger,
                    events: AsyncStream<TranscodeEvent>.Continuation? = nil) async throws -> (ReadyManifest, published: String) {
        let scratch = try PrivateDirectory(prefix: "ingestd-transcode-")
        var job = self
        let output = try S3Location(url: destination)
        do {
            if case .path(let text) = input, let location = try S3Location(url: text) {
                job.input = .path(try await ObjectInput(client: client).fetch(location, into: scratch.path, limits: preset.limits))
            }
            if let output, try await BucketPublisher(client: client).isPublished(output) {
                throw IngestError.outputExists(path: output.description)
            }
        } catch {
            events?.finish()
            throw error
        }
        guard let output else { return (try await job.run(logger: logger, events: events), destination) }
        job.destination = "\(scratch.path)/out"
        let manifest = try await job.run(logger: logger, events: events)
        let published: (version: S3Location, objects: Int, bytes: Int64)
        do {
            published = try await BucketPublisher(client: client).publish(job.destination, to: output, condition: .ifAbsent)
        } catch is PointerMoved {
            throw IngestError.outputExists(path: output.description)  // published meanwhile by someone else
        }
        let master = published.version.appending("master.m3u8").description
        logger.info("published to the bucket", metadata: ["output": "\(master)", "objects": "\(published.objects)", "bytes": "\(published.bytes)"])
        return (manifest, published.version.description)
    }
}
