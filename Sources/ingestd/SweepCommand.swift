import ArgumentParser
import Fleet
import Foundation
import Ingest
import ObjectStorage

struct SweepCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sweep",
        abstract: "Delete what dead attempts left in a bucket CDN: version prefixes no job names, stale multipart uploads.",
        discussion: """
        A fleet publishing to a bucket (`worker --cdn s3://…`) writes each attempt under its own \\
        prefix CDN/<id>/t<token>/ and names it in the job's row only when the attempt's end is \\
        recorded. An attempt whose worker died, froze past its lease or lost the database leaves \\
        its prefix unnamed. `sweep` deletes every such prefix whose newest object is older than \\
        --grace, keeps every prefix a row names or a running attempt may still be writing, and \\
        aborts multipart uploads begun before --grace. Run it from cron or a Kubernetes CronJob.

          ingestd sweep --database postgres://ingestd@db/ingestd --cdn s3://media/cdn --dry-run
          ingestd sweep --cdn s3://media/cdn --grace 7200 --json
        """)

    @OptionGroup var databaseOption: DatabaseOption

    @Option(help: ArgumentHelp("The bucket CDN the workers publish to.", valueName: "s3-url"))
    var cdn: String

    @OptionGroup var storage: StorageOption

    @Option(help: ArgumentHelp("Seconds an unnamed prefix must have been left alone before it is deleted (above the job timeout).", valueName: "seconds"))
    var grace: Double = 3600

    @Flag(help: "Say what would be deleted; delete nothing.")
    var dryRun = false

    @Flag(help: "Print the report as JSON.")
    var json = false

    func validate() throws {
        guard S3Location.isURL(cdn) else { throw ValidationError("--cdn must be a bucket prefix, s3://bucket/prefix") }
        guard grace >= 0 else { throw ValidationError("--grace must be 0 or more seconds") }
    }

    func run() async throws {
        let database = try databaseOption.resolve()
        let client = try storage.client(json: json)
        let location: S3Location
        do {
            location = try S3Location(url: cdn)!
        } catch {
            throw Report.fail(error, json: json)
        }
        let logger = Log.make(label: "ingestd.sweep")
        let report: BucketSweeper.Report
        do {
            report = try await database.withClient(logger: logger) { [grace, dryRun] postgres in
                let queue = JobQueue(client: postgres, logger: logger, timeout: database.callTimeout)
                return try await BucketSweeper(client: client, queue: queue, cdn: location, grace: .seconds(grace)).sweep(dryRun: dryRun)
            }
        } catch let error as S3Error {
            throw Report.fail(error, json: json)
        } catch {
            throw Report.fail(QueueUnavailable(database: database, error: error), json: json)
        }
        if json {
            print(String(decoding: try JSONEncoder.ingestd.encode(report), as: UTF8.self))
            return
        }
        for prefix in report.removed { print("\(dryRun ? "would delete" : "deleted") \(prefix)") }
        print("\(report.removed.count) prefixes (\(report.removedObjects) objects) \(dryRun ? "to delete" : "deleted"), "
              + "\(report.kept) kept, \(report.abortedUploads) multipart uploads \(dryRun ? "to abort" : "aborted")")
    }
}
