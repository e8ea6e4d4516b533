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

    @Option(help: ArgumentHelp("signed: these videos play only through signed URLs (docs/OUTPUT.md); public (default): as their uploads ask.", valueName: "policy"))
    var playback: PlaybackPolicy = .public

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
        let submitter = Submitter(preset: preset, playback: playback)
        var submissions: [NewJob] = []
        for input in inputs {
            do {
                if let storage, S3Location.isURL(input) {
                    // In a bucket: checked from S3's answers (HEAD or the listing), nothing downloaded.
                    submissions.append(try await submitter.job(remote: input, storage: BucketStorage(client: storage), root: roots.bucket))
                } else if let uploads {
                    let path = URL(fileURLWithPath: input).standardizedFileURL.path
                    try submitter.check(path, uploads: uploads)
                    submissions.append(submitter.job(.path(path), name: (path as NSString).lastPathComponent))
                }
            } catch let refusal as UploadPrecheck.Refusal {
                throw Report.fail(SubmitRefusal(refusal: refusal), json: json)
            } catch let error as S3Error {
                throw Report.fail(error, json: json)
            } catch let error as S3Location.Invalid {
                throw Report.fail(error, json: json)
            } catch {
                throw Report.fail(SubmitRefusal(refusal: .init(code: IngestError.code(of: error), message: "\(error)")), json: json)
            }
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
                let store = PostgresStore.producer(JobQueue(client: client, logger: logger, timeout: database.callTimeout))
                try await submitter.submit(queued, to: store)
            }
        } catch {
            throw Report.fail(QueueUnavailable(database: database, error: error), json: json)
        }
        if json {
            let body = submissions.map { ["id": $0.id, "input": $0.input.description] }
            print(String(decoding: try JSONSerialization.data(withJSONObject: body, options: [.sortedKeys, .withoutEscapingSlashes]),
                         as: UTF8.self))
        } else {
            for submission in submissions { print("\(submission.id)  \(submission.input.description)") }
        }
    }
}
