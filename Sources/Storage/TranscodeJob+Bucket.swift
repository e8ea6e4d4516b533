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
        let publisher = BucketPublisher(client: client)
        let version = output.appending(Self.newVersionName())
        let sent = try await publisher.upload(job.destination, to: version)
        do {
            try await publisher.switchPointer(output, to: version, condition: .ifAbsent)
        } catch let error as S3Error where error.isPreconditionFailed {
            throw IngestError.outputExists(path: output.description)  // published meanwhile by someone else
        }
        let master = version.appending("master.m3u8").description
        logger.info("published to the bucket", metadata: ["output": "\(master)", "objects": "\(sent.objects)", "bytes": "\(sent.bytes)"])
        return (manifest, version.description)
    }

    /// A version prefix name: sortable by time, unique (`v20261125T093000Z-1a2b3c4d`).
    static func newVersionName(_ date: Date = Date()) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        return "v\(formatter.string(from: date))-\(String(format: "%08x", UInt32.random(in: 0...UInt32.max)))"
    }
}
