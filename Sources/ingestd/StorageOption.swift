import ArgumentParser
import Foundation
import Ingest
import ObjectStorage
import Storage

/// `--s3-endpoint URL`: where `s3://` inputs and outputs live. Credentials and region come from
/// the environment (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`,
/// `AWS_REGION`), as every S3 tool takes them; see docs/STORAGE.md.
struct StorageOption: ParsableArguments {
    @Option(name: .customLong("s3-endpoint"), help: ArgumentHelp(
        "S3 endpoint for s3:// paths (default: $AWS_ENDPOINT_URL_S3, else AWS in $AWS_REGION). An explicit endpoint (MinIO, SeaweedFS, R2, GCS) is addressed path-style.",
        valueName: "url"))
    var endpoint: String?

    /// `s3://bucket/prefix` without trailing slashes, as a bucket CDN is named everywhere.
    static func trimmed(_ prefix: String) -> String { String(prefix.reversed().drop { $0 == "/" }.reversed()) }

    /// A bucket CDN (`s3://bucket/prefix`) and the storage behind it; exit 78 when the prefix is
    /// not one, or credentials or the endpoint are wrong.
    func bucket(_ cdn: String, json: Bool = false) throws -> (prefix: String, storage: BucketStorage) {
        do {
            _ = try S3Location(url: Self.trimmed(cdn))
        } catch {
            throw Report.fail(error, json: json)
        }
        return (Self.trimmed(cdn), BucketStorage(client: try client(json: json)))
    }

    /// The target of a command that acts on what is published (`delete`): a bucket prefix
    /// through this storage, or an existing directory (exit 78 otherwise). `pointer`: a bucket's
    /// `<id>/current.json` names the version (the spool), else the queue's row does.
    func target(cdn: String, pointer: Bool, json: Bool) throws -> any OutputTarget {
        if S3Location.isURL(cdn) {
            let (prefix, bucket) = try bucket(cdn, json: json)
            return OutputTargets.make(cdn: prefix, growing: false, storage: bucket, pointer: pointer)
        }
        let root = URL(fileURLWithPath: cdn).standardizedFileURL.path
        try WorkerOptions.requireRoot("--cdn", root)
        return OutputTargets.make(cdn: root, growing: false, storage: nil, pointer: pointer)
    }

    /// The client for `s3://` paths, or exit 78 (EX_CONFIG) when credentials or the endpoint are wrong.
    func client(json: Bool = false) throws -> S3Client {
        do {
            return S3Client(configuration: try S3Configuration.fromEnvironment(endpoint: endpoint))
        } catch {
            throw Report.fail(error, json: json)
        }
    }
}
