import Foundation
import Ingest
import Logging
import Transcode

/// The transcode path alone (``TranscodeJob``: open and check the upload, decode, normalise,
/// encode the ladder, publish atomically), for `Tests/asan.sh`: built with AddressSanitizer
/// without the fleet's and the webhooks' dependencies, which the `ingestd` product links.
///
///     ingestd-asan INPUT OUT     exit 0 published, 65 refused as bad input, else the failure's status
@main
struct Entry {
    static func main() async {
        let arguments = CommandLine.arguments
        guard arguments.count == 3 else {
            FileHandle.standardError.write(Data("usage: ingestd-asan INPUT OUT\n".utf8))
            exit(ExitStatus.usage.rawValue)
        }
        do {
            let job = TranscodeJob(input: arguments[1], destination: arguments[2], preset: .builtIn)
            _ = try await job.run(logger: Logger(label: "ingestd-asan"))
            exit(ExitStatus.success.rawValue)
        } catch {
            FileHandle.standardError.write(Data("ingestd-asan: \(error)\n".utf8))
            exit(ExitStatus(for: error).rawValue)
        }
    }
}
