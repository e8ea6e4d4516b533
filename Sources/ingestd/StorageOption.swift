import ArgumentParser
import Foundation
import ObjectStorage

/// `--s3-endpoint URL`: where `s3://` inputs and outputs live. Credentials and region come from
/// the environment (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`,
/// `AWS_REGION`), as every S3 tool takes them; see docs/STORAGE.md.
struct StorageOption: ParsableArguments {
    @Option(name: .customLong("s3-endpoint"), help: ArgumentHelp(
        "S3 endpoint for s3:// paths (default: $AWS_ENDPOINT_URL_S3, else AWS in $AWS_REGION). An explicit endpoint (MinIO, SeaweedFS, R2, GCS) is addressed path-style.",
        valueName: "url"))
    var endpoint: String?

    /// The client for `s3://` paths, or exit 78 (EX_CONFIG) when credentials or the endpoint are wrong.
    func client(json: Bool = false) throws -> S3Client {
        do {
            return S3Client(configuration: try S3Configuration.fromEnvironment(endpoint: endpoint))
        } catch {
            throw Report.fail(error, json: json)
        }
    }
}
