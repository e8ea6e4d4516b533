import ArgumentParser
import Foundation
import Ingest

/// `--uploads ROOT` or `INGESTD_UPLOADS`: where the fleet's inputs must be (``UploadsRoot``).
/// Required by `worker` and `submit`; a root that does not exist stops the command (exit 78).
struct UploadsOption: ParsableArguments {
    @Option(help: ArgumentHelp(
        "Uploads root (must exist; default: $INGESTD_UPLOADS): inputs are taken only from under it, and it holds the .ingestd-uploads marker that `submit` leaves, by which a worker tells a missing mount from a missing upload.",
        valueName: "dir"))
    var uploads: String?

    /// Whether a root is configured (by option or environment).
    var isGiven: Bool { uploads != nil || !(ProcessInfo.processInfo.environment["INGESTD_UPLOADS"] ?? "").isEmpty }

    /// The root, or exit 78 (EX_CONFIG) naming what is missing.
    func resolve() throws -> UploadsRoot {
        guard let path = uploads ?? ProcessInfo.processInfo.environment["INGESTD_UPLOADS"], !path.isEmpty else {
            throw Report.fail(MissingRoot(option: "--uploads", path: "(not given)", detail: "give --uploads DIR or INGESTD_UPLOADS"), json: false)
        }
        let standardized = URL(fileURLWithPath: path).standardizedFileURL.path
        try WorkerOptions.requireRoot("--uploads", standardized)
        return try UploadsRoot(standardized)
    }
}
