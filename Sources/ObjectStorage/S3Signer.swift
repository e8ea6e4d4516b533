import Crypto
import Foundation

/// AWS Signature Version 4 for S3, written from the AWS specification ("Signing AWS API
/// requests") and checked byte for byte against botocore's `S3SigV4Auth` and
/// `S3SigV4QueryAuth`. As for S3, the path is signed as it is sent (already percent-encoded,
/// see ``S3Signer/encode(_:keepingSlashes:)``), not normalized.
public struct S3Signer: Sendable {
    public var credentials: S3Credentials
    public var region: String
    public var service = "s3"

    /// The payload hash of a request whose body is not signed (presigned URLs).
    public static let unsignedPayload = "UNSIGNED-PAYLOAD"

    public init(credentials: S3Credentials, region: String) {
        self.credentials = credentials
        self.region = region
    }

    /// The headers to add to a request for it to be authorized: `Authorization`, `X-Amz-Date`,
    /// `X-Amz-Content-SHA256` and, with a session token, `X-Amz-Security-Token`. `headers` are
    /// those the request already has (all signed, but `user-agent` and `expect`); `payloadHash`
    /// is the hex SHA-256 of the body (``sha256Hex(_:)``).
    public func sign(method: String, url: URL, headers: [(String, String)] = [], payloadHash: String,
                     date: Date = Date()) -> [(String, String)] {
        let (amzDate, scope) = Self.stamps(date, region: region, service: service)
        var added: [(String, String)] = [("X-Amz-Date", amzDate), ("X-Amz-Content-SHA256", payloadHash)]
        if let token = credentials.sessionToken { added.append(("X-Amz-Security-Token", token)) }
        let signed = Self.canonicalHeaders(headers + added, url: url)
        let names = signed.map(\.name).joined(separator: ";")
        let request = [method.uppercased(), Self.path(of: url), Self.canonicalQuery(Self.query(of: url)),
                       signed.map { "\($0.name):\($0.value)\n" }.joined(), names, payloadHash].joined(separator: "\n")
        let signature = self.signature(request, amzDate: amzDate, scope: scope)
        return added + [("Authorization",
                         "AWS4-HMAC-SHA256 Credential=\(credentials.accessKeyID)/\(scope), SignedHeaders=\(names), Signature=\(signature)")]
    }

    /// A presigned URL (query-string authentication): anyone holding it may make this request
    /// until `expires` seconds after `date` (at most 7 days, as S3 allows).
    public func presign(method: String = "GET", url: URL, expires: Int, date: Date = Date()) -> URL {
        let (amzDate, scope) = Self.stamps(date, region: region, service: service)
        var query = Self.query(of: url).map { [$0] } ?? []
        var parameters = [("X-Amz-Algorithm", "AWS4-HMAC-SHA256"), ("X-Amz-Credential", "\(credentials.accessKeyID)/\(scope)"),
                          ("X-Amz-Date", amzDate), ("X-Amz-Expires", "\(min(max(expires, 1), 604_800))"),
                          ("X-Amz-SignedHeaders", "host")]
        if let token = credentials.sessionToken { parameters.append(("X-Amz-Security-Token", token)) }
        query += parameters.map { "\(Self.encode($0.0))=\(Self.encode($0.1))" }
        let joined = query.joined(separator: "&")
        let host = Self.host(of: url)
        let request = [method.uppercased(), Self.path(of: url), Self.canonicalQuery(joined), "host:\(host)\n", "host",
                       Self.unsignedPayload].joined(separator: "\n")
        var components = URLComponents(url: url, resolvingAgainstBaseURL: false)!
        components.percentEncodedQuery = joined + "&X-Amz-Signature=" + signature(request, amzDate: amzDate, scope: scope)
        return components.url!
    }

    /// Hex SHA-256 of a body read in pieces.
    struct Hasher {
        private var sha = SHA256()
        mutating func update(_ bytes: some DataProtocol) { sha.update(data: bytes) }
        func finalize() -> String { S3Signer.hex(sha.finalize()) }
    }

    /// Hex SHA-256, for `payloadHash`.
    public static func sha256Hex(_ data: some DataProtocol) -> String { hex(SHA256.hash(data: data)) }

    /// Percent-encodes as SigV4 wants: every byte but `A-Z a-z 0-9 - _ . ~` (and `/` when
    /// `keepingSlashes`, for object keys in paths), upper-case hex.
    public static func encode(_ text: String, keepingSlashes: Bool = false) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"):
                out.append(Character(UnicodeScalar(byte)))
            case UInt8(ascii: "/") where keepingSlashes:
                out.append("/")
            default:
                out += String(format: "%%%02X", byte)
            }
        }
        return out
    }

    // MARK: the specification's steps

    private func signature(_ canonicalRequest: String, amzDate: String, scope: String) -> String {
        let toSign = ["AWS4-HMAC-SHA256", amzDate, scope, Self.sha256Hex(Data(canonicalRequest.utf8))].joined(separator: "\n")
        var key = SymmetricKey(data: Data("AWS4\(credentials.secretAccessKey)".utf8))
        for part in [String(amzDate.prefix(8)), region, service, "aws4_request"] {
            key = SymmetricKey(data: Data(HMAC<SHA256>.authenticationCode(for: Data(part.utf8), using: key)))
        }
        return Self.hex(HMAC<SHA256>.authenticationCode(for: Data(toSign.utf8), using: key))
    }

    /// `20261125T120000Z` and `20261125/region/s3/aws4_request`.
    private static func stamps(_ date: Date, region: String, service: String) -> (String, String) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        let day = String(format: "%04d%02d%02d", c.year!, c.month!, c.day!)
        return (day + String(format: "T%02d%02d%02dZ", c.hour!, c.minute!, c.second!), "\(day)/\(region)/\(service)/aws4_request")
    }

    /// Lower-case names, values with runs of white space collapsed, sorted; `host` added when
    /// absent; `user-agent`, `expect`, `transfer-encoding` and `x-amzn-trace-id` left out.
    private static func canonicalHeaders(_ headers: [(String, String)], url: URL) -> [(name: String, value: String)] {
        let unsigned: Set = ["expect", "transfer-encoding", "user-agent", "x-amzn-trace-id", "authorization"]
        var byName: [String: [String]] = [:]
        for (name, value) in headers where !unsigned.contains(name.lowercased()) {
            byName[name.lowercased(), default: []].append(value.split(whereSeparator: \.isWhitespace).joined(separator: " "))
        }
        if byName["host"] == nil { byName["host"] = [host(of: url)] }
        return byName.keys.sorted().map { ($0, byName[$0]!.joined(separator: ",")) }
    }

    /// The query's `key=value` pairs as sent, sorted (by key, then value); `key` alone is `key=`.
    private static func canonicalQuery(_ query: String?) -> String {
        guard let query, !query.isEmpty else { return "" }
        let pairs = query.split(separator: "&").map { pair -> (String, String) in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (String(parts[0]), parts.count > 1 ? String(parts[1]) : "")
        }
        return pairs.sorted { $0.0 != $1.0 ? $0.0 < $1.0 : $0.1 < $1.1 }.map { "\($0.0)=\($0.1)" }.joined(separator: "&")
    }

    private static func query(of url: URL) -> String? {
        URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedQuery
    }

    private static func path(of url: URL) -> String {
        let path = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? ""
        return path.isEmpty ? "/" : path
    }

    private static func host(of url: URL) -> String {
        let host = url.host ?? ""
        guard let port = url.port, !(url.scheme == "http" && port == 80), !(url.scheme == "https" && port == 443) else { return host }
        return "\(host):\(port)"
    }

    static func hex(_ bytes: some Sequence<UInt8>) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
}
