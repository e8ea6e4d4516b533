import ArgumentParser
import Fleet
import Foundation
import ObjectStorage
import Storage
import Ingest
import Transcode

struct SubmitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "submit",
        abstract: "Queue uploads on shared storage for the fleet's workers (PostgreSQL job queue).",
        discussion: """
        Each INPUT is a video file or an upload directory (with upload.json) under the uploads \
        root (--uploads or INGESTD_UPLOADS), on storage every worker can read, e.g. an NFS \
        mount; submit leaves the root's .ingestd-uploads marker, by which workers know the \
        mount is there. Each input is checked before anything is queued: it is under the root, \
        exists, is a regular file or an upload directory (not a link, FIFO or device), and is \
        within the preset's size limit. If one fails, nothing is queued. The preset is stored \
        with each job, so every worker encodes it the same way.

        An INPUT may also be in a bucket: s3://bucket/key (a video file) or s3://bucket/prefix/ \
        (an upload directory) under the bucket's uploads root (--uploads s3://bucket/prefix), \
        checked from S3's answers (HEAD, listing) without downloading; credentials from \
        AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (docs/STORAGE.md).

          ingestd submit --database postgres://ingestd@db/ingestd --uploads /mnt/uploads /mnt/uploads/a.mp4 /mnt/uploads/trip
          ingestd submit --json /mnt/uploads/*.mp4 | jq -r '.[].id'
          ingestd submit --s3-endpoint http://seaweed:8333 --uploads s3://media/uploads s3://media/uploads/a.mp4 s3://media/uploads/trip/

        Prints one job id per input (the job publishes to CDN/<id>/); with --json an array of \
        {"id", "input"}. Follow the jobs with `ingestd status --database URL`.
        """
    )

    @OptionGroup var databaseOption: DatabaseOption
    @OptionGroup var presetOption: PresetOption
    @OptionGroup var uploadsOption: UploadsOption

    @OptionGroup var storage: StorageOption

    @Flag(help: "Print [{\"id\", \"input\"}] as JSON.")
    var json = false

    @Argument(help: ArgumentHelp("Video files or upload directories.", valueName: "input"))
    var inputs: [String]

    func validate() throws {
        guard !inputs.isEmpty else { throw ValidationError("at least one INPUT is required") }
    }

    func run() async throws {
        let database = try databaseOption.resolve()
        let local = inputs.filter { !S3Location.isURL($0) }
        let roots = try uploadsOption.resolve(needsDirectory: !local.isEmpty, needsBucket: local.count < inputs.count)
        let uploads = local.isEmpty ? nil : roots.directory
        let storage = local.count == inputs.count ? nil : try storage.client(json: json)
        let logger = Log.make(label: "ingestd.submit")
        let preset: Preset
        do {
            preset = try presetOption.load()
        } catch {
            throw Report.fail(error, json: json)
        }
        var submissions: [JobQueue.Submission] = []
        for input in inputs {
            if let storage {
                // In a bucket: checked from S3's answers (HEAD or the listing), nothing downloaded.
                if let root = roots.bucket, let refusal = root.refusal(for: input) {
                    throw Report.fail(SubmitRefusal(refusal: refusal), json: json)
                }
                do {
                    if let location = try S3Location(url: input) {
                        _ = try await ObjectInput(client: storage).check(location, limits: preset.limits)
                        submissions.append(.init(id: Spool.makeID(for: location.name.isEmpty ? "upload" : location.name), input: location.description,
                                                 preset: String(decoding: preset.canonicalJSON(), as: UTF8.self)))
                        continue
                    }
                } catch let error as S3Error {
                    throw Report.fail(error, json: json)
                } catch let error as S3Location.Invalid {
                    throw Report.fail(error, json: json)
                } catch {
                    throw Report.fail(SubmitRefusal(refusal: .init(code: IngestError.code(of: error), message: "\(error)")), json: json)
                }
            }
            guard let uploads else { continue }
            let path = URL(fileURLWithPath: input).standardizedFileURL.path
            if let refusal = uploads.refusal(for: .path(path)) ?? UploadPrecheck.check(path, limits: preset.limits) {
                throw Report.fail(SubmitRefusal(refusal: refusal), json: json)
            }
            // An upload directory's manifest is validated here as the worker will (every value
            // bound for the database included: no U+0000), so a bad one is refused now, by field.
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
                do {
                    _ = try Upload.open(path, limits: preset.limits)
                } catch {
                    throw Report.fail(SubmitRefusal(refusal: .init(code: IngestError.code(of: error), message: "\(error)")), json: json)
                }
            }
            submissions.append(.init(id: Spool.makeID(for: (path as NSString).lastPathComponent), input: path,
                                     preset: String(decoding: preset.canonicalJSON(), as: UTF8.self), uploadID: Upload.declaredID(of: .path(path))))
        }
        let queued = submissions
        do {
            try uploads?.mark()
        } catch {
            throw Report.fail(error, json: json)
        }
        try await database.migrate(logger: logger, json: json)
        do {
            try await database.withClient(logger: logger) { client in
                try await JobQueue(client: client, logger: logger, timeout: database.callTimeout).enqueue(queued)
            }
        } catch {
            throw Report.fail(QueueUnavailable(database: database, error: error), json: json)
        }
        if json {
            let body = submissions.map { ["id": $0.id, "input": $0.input] }
            print(String(decoding: try JSONSerialization.data(withJSONObject: body, options: [.sortedKeys, .withoutEscapingSlashes]),
                         as: UTF8.self))
        } else {
            for submission in submissions { print("\(submission.id)  \(submission.input)") }
        }
    }
}
