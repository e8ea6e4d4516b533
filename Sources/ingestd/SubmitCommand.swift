import ArgumentParser
import Fleet
import Foundation
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

          ingestd submit --database postgres://ingestd@db/ingestd --uploads /mnt/uploads /mnt/uploads/a.mp4 /mnt/uploads/trip
          ingestd submit --json /mnt/uploads/*.mp4 | jq -r '.[].id'

        Prints one job id per input (the job publishes to CDN/<id>/); with --json an array of \
        {"id", "input"}. Follow the jobs with `ingestd status --database URL`.
        """
    )

    @OptionGroup var databaseOption: DatabaseOption
    @OptionGroup var presetOption: PresetOption
    @OptionGroup var uploadsOption: UploadsOption

    @Flag(help: "Print [{\"id\", \"input\"}] as JSON.")
    var json = false

    @Argument(help: ArgumentHelp("Video files or upload directories.", valueName: "input"))
    var inputs: [String]

    func validate() throws {
        guard !inputs.isEmpty else { throw ValidationError("at least one INPUT is required") }
    }

    func run() async throws {
        let database = try databaseOption.resolve()
        let uploads = try uploadsOption.resolve()
        let logger = Log.make(label: "ingestd.submit")
        let preset: Preset
        do {
            preset = try presetOption.load()
        } catch {
            throw Report.fail(error, json: json)
        }
        var submissions: [JobQueue.Submission] = []
        for input in inputs {
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
                                     preset: String(decoding: preset.canonicalJSON(), as: UTF8.self)))
        }
        let queued = submissions
        do {
            try uploads.mark()
        } catch {
            throw Report.fail(error, json: json)
        }
        do {
            try await database.withClient(logger: logger) { client in
                try await QueueSchema.migrate(client, logger: logger)
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
