import Foundation

/// Where and as whom to reach S3: the endpoint, the region, the credentials, and how buckets
/// are addressed. AWS takes virtual-host style (`https://bucket.s3.region.amazonaws.com/key`);
/// an explicit endpoint (MinIO, SeaweedFS, R2, GCS's XML API) takes path style
/// (`http://host:port/bucket/key`).
public struct S3Configuration: Sendable {
    public var endpoint: URL
    public var region: String
    public var credentials: S3Credentials
    public var pathStyle: Bool

    public struct Invalid: Error, CustomStringConvertible {
        public var description: String
        public init(description: String) { self.description = description }
    }

    public init(endpoint: URL? = nil, region: String = "us-east-1", credentials: S3Credentials, pathStyle: Bool? = nil) {
        self.endpoint = endpoint ?? URL(string: "https://s3.\(region).amazonaws.com")!
        self.region = region
        self.credentials = credentials
        self.pathStyle = pathStyle ?? (endpoint != nil)
    }

    /// From the credentials ``S3Credentials/fromEnvironment(_:)`` finds, `AWS_REGION`
    /// (or `AWS_DEFAULT_REGION`) and `--s3-endpoint` (or `AWS_ENDPOINT_URL_S3` / `AWS_ENDPOINT_URL`).
    public static func fromEnvironment(endpoint: String? = nil,
                                       _ environment: [String: String] = ProcessInfo.processInfo.environment) throws -> S3Configuration {
        guard let credentials = S3Credentials.fromEnvironment(environment) else {
            throw Invalid(description: "s3:// needs credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for temporary ones), or AWS_SHARED_CREDENTIALS_FILE")
        }
        let region = [environment["AWS_REGION"], environment["AWS_DEFAULT_REGION"]].compactMap { $0 }.first { !$0.isEmpty } ?? "us-east-1"
        var url: URL?
        if let text = endpoint ?? environment["AWS_ENDPOINT_URL_S3"] ?? environment["AWS_ENDPOINT_URL"], !text.isEmpty {
            guard let parsed = URL(string: text), ["http", "https"].contains(parsed.scheme ?? ""), parsed.host?.isEmpty == false,
                  parsed.query == nil else {
                throw Invalid(description: "--s3-endpoint must be an http(s) URL such as http://127.0.0.1:8333, got \(text.debugDescription)")
            }
            url = parsed
        }
        return S3Configuration(endpoint: url, region: region, credentials: credentials)
    }

    /// The URL of `location` (an object, or the bucket when the key is empty) with `query`
    /// (already encoded, `name=value&…`).
    public func url(for location: S3Location, query: String? = nil) -> URL {
        var components = URLComponents(url: endpoint, resolvingAgainstBaseURL: false)!
        let base = components.percentEncodedPath.hasSuffix("/") ? String(components.percentEncodedPath.dropLast()) : components.percentEncodedPath
        let key = S3Signer.encode(location.key, keepingSlashes: true)
        if pathStyle {
            components.percentEncodedPath = "\(base)/\(location.bucket)/\(key)"
        } else {
            components.host = "\(location.bucket).\(components.host ?? "")"
            components.percentEncodedPath = "\(base)/\(key)"
        }
        components.percentEncodedQuery = query
        return components.url!
    }
}
