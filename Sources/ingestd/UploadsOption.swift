import ArgumentParser
import Foundation
import Ingest

/// `--uploads ROOT` (repeatable) or `INGESTD_UPLOADS`: where the fleet's inputs must be, a
/// directory (``UploadsRoot``) and/or a bucket prefix (``BucketUploadsRoot``). Required by
/// `worker` and `submit`; a directory that does not exist stops the command (exit 78).
struct UploadsOption: ParsableArguments {
    @Option(help: ArgumentHelp(
        "Uploads root (default: $INGESTD_UPLOADS): inputs are taken only from under it. A directory (must exist) holds the .ingestd-uploads marker that `submit` leaves, by which a worker tells a missing mount from a missing upload; s3://bucket/prefix admits s3:// inputs under that prefix. Give it twice for both.",
        valueName: "dir|s3://bucket/prefix"))
    var uploads: [String] = []

    /// The roots as given (option, else environment).
    private var given: [String] {
        if !uploads.isEmpty { return uploads }
        let environment = ProcessInfo.processInfo.environment["INGESTD_UPLOADS"] ?? ""
        return environment.isEmpty ? [] : [environment]
    }

    /// The configured roots, or exit 78 (EX_CONFIG) naming what is missing: `needs` says which
    /// kinds the command must have (a local input needs a directory, an s3:// input a bucket).
    func resolve(needsDirectory: Bool, needsBucket: Bool) throws -> (directory: UploadsRoot?, bucket: BucketUploadsRoot?) {
        var directory: UploadsRoot?, bucket: BucketUploadsRoot?
        for root in given {
            if RemotePath.isRemote(root) {
                guard bucket == nil else { throw ValidationError("--uploads: one bucket prefix at most") }
                do {
                    bucket = try BucketUploadsRoot(root)
                } catch {
                    throw Report.fail(MissingRoot(option: "--uploads", path: root, detail: "\(error)"), json: false)
                }
            } else {
                guard directory == nil else { throw ValidationError("--uploads: one directory at most") }
                let standardized = URL(fileURLWithPath: root).standardizedFileURL.path
                try WorkerOptions.requireRoot("--uploads", standardized)
                directory = try UploadsRoot(standardized)
            }
        }
        if needsDirectory, directory == nil {
            throw Report.fail(MissingRoot(option: "--uploads", path: "(no directory given)", detail: "give --uploads DIR or INGESTD_UPLOADS"), json: false)
        }
        if needsBucket, bucket == nil {
            throw Report.fail(MissingRoot(option: "--uploads", path: "(no bucket prefix given)",
                                          detail: "s3:// inputs are taken only from under --uploads s3://bucket/prefix"), json: false)
        }
        if directory == nil, bucket == nil {
            throw Report.fail(MissingRoot(option: "--uploads", path: "(not given)", detail: "give --uploads DIR and/or --uploads s3://bucket/prefix, or INGESTD_UPLOADS"), json: false)
        }
        return (directory, bucket)
    }
}
