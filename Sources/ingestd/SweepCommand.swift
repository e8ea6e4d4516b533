import ArgumentParser
import Fleet
import Foundation
import Ingest
import ObjectStorage
import Storage

struct SweepCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sweep",
        abstract: "Delete what dead attempts left in a bucket CDN: version prefixes nothing names, stale multipart uploads.",
        discussion: """
        Every attempt publishing to a bucket writes its own prefix CDN/<id>/<version>/ (t<token> \
        for watch and worker, v<UTC time>-<hex> for reprocess) and names it last. `sweep` deletes \
        each such prefix nothing names whose newest object is older than --grace, and aborts \
        multipart uploads under such prefixes begun before --grace. Nothing else under the CDN is \
        touched. Run it from cron or a Kubernetes CronJob.

        With a database (--database, --database-url-file or INGESTD_DATABASE_URL; a fleet: \
        `worker --cdn s3://…`) the job rows are the names: an attempt of a job that exists goes \
        unless its row names it or it may still be running. Without one (a single host: `watch \
        --cdn s3://…`, `reprocess --cdn s3://…`) each CDN/<id>/current.json is: every version it \
        does not name goes, once the pointer was switched away from it more than --grace ago; an \
        id with no current.json names none; an id whose current.json cannot be read keeps all. \
        Versions without a single current.json among them (a fleet's CDN) are refused, exit 64.

          ingestd sweep --database postgres://ingestd@db/ingestd --cdn s3://media/cdn --dry-run
          ingestd sweep --cdn s3://media/cdn --grace 7200 --json      (a single host)
        """)

    @OptionGroup var databaseOption: DatabaseOption

    @Option(help: ArgumentHelp("The bucket CDN the workers, watch or reprocess publish to.", valueName: "s3-url"))
    var cdn: String

    @OptionGroup var storage: StorageOption

    @Option(help: ArgumentHelp("Seconds an unnamed prefix must have been left alone before it is deleted (above the longest attempt or job timeout).", valueName: "seconds"))
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
        let database = databaseOption.isGiven ? try databaseOption.resolve() : nil
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
            if let database {
                report = try await database.withClient(logger: logger) { [grace, dryRun] postgres in
                    let names = JobRowNames(queue: JobQueue(client: postgres, logger: logger, timeout: database.callTimeout))
                    return try await BucketSweeper(client: client, names: names, cdn: location, grace: .seconds(grace)).sweep(dryRun: dryRun)
                }
            } else {
                let names = PointerNames(client: client, logger: logger)
                report = try await BucketSweeper(client: client, names: names, cdn: location, grace: .seconds(grace)).sweep(dryRun: dryRun)
            }
        } catch let error as S3Error {
            throw Report.fail(error, json: json)
        } catch {
            throw Report.fail(database.map { QueueUnavailable(database: $0, error: error) } ?? error, json: json)
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
