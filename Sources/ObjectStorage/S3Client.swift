import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// A small S3 client on async-http-client: what ingestd needs of a bucket (HEAD, streamed GET
/// and PUT, multipart, list, delete, conditional writes), each request signed (``S3Signer``),
/// each retried with backoff while the answer is transient (no answer, 5xx, `SlowDown`).
/// Bodies stream from and to files (a part or small object from one read into memory, at most
/// ``bufferedBodyLimit``): memory does not grow with object size.
public struct S3Client: Sendable {
    public let configuration: S3Configuration
    let http: HTTPClient
    let signer: S3Signer
    /// Tries per request (the first included) while failures are transient.
    public var tries = 5
    /// The first retry's delay; it doubles per try (with ±20 % jitter), up to 5 s.
    public var backoff = Duration.milliseconds(200)
    /// Objects above this size are uploaded in parts of ``partSize``, ``parallelParts`` at once.
    public var multipartThreshold: Int64 = 16 << 20
    public var partSize: Int64 = 8 << 20
    public var parallelParts = 4
    /// File bodies up to this size are read whole and sent from memory (see ``FileChunks``); at
    /// most ``parallelParts`` such parts of one upload are in memory at once.
    public static let bufferedBodyLimit: Int64 = 16 << 20

    /// The process's HTTP client for S3: bodies are taken as stored (no decompression: an
    /// object saved with `Content-Encoding: gzip` is not inflated past its limit or changed) and
    /// redirects are not followed (a request signed for one host never goes to another).
    public static let http: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.redirectConfiguration = .disallow
        configuration.decompression = .disabled
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    public init(configuration: S3Configuration, http: HTTPClient = S3Client.http) {
        self.configuration = configuration
        self.http = http
        signer = S3Signer(credentials: configuration.credentials, region: configuration.region)
    }

    /// What a HEAD tells of an object.
    public struct ObjectInfo: Sendable, Equatable {
        public var size: Int64
        public var etag: String
        public var contentType: String?
        public var cacheControl: String?
    }

    /// A signed GET URL anyone may use for `expires` seconds (at most 7 days).
    public func presignedURL(_ location: S3Location, expires: Int) -> URL {
        signer.presign(method: "GET", url: configuration.url(for: location), expires: expires)
    }

    /// The object's size, ETag and headers; nil when there is no such object.
    public func head(_ location: S3Location) async throws -> ObjectInfo? {
        do {
            let response = try await send(.HEAD, location, expecting: [200])
            return ObjectInfo(size: Int64(response.headers.first(name: "content-length") ?? "") ?? 0,
                              etag: response.headers.first(name: "etag") ?? "",
                              contentType: response.headers.first(name: "content-type"),
                              cacheControl: response.headers.first(name: "cache-control"))
        } catch let error as S3Error where error.isNotFound {
            return nil
        }
    }

    /// A small object (at most `limit` bytes, 1 MB unless told) read whole, with its ETag; nil
    /// when there is no such object.
    public func read(_ location: S3Location, limit: Int = 1 << 20) async throws -> (data: Data, etag: String)? {
        do {
            let response = try await send(.GET, location, expecting: [200])
            guard response.body.count <= limit else {
                throw S3ObjectTooLarge(location: location, size: Int64(response.body.count), limit: Int64(limit))
            }
            return (response.body, response.headers.first(name: "etag") ?? "")
        } catch let error as S3Error where error.isNotFound {
            return nil
        }
    }

    /// The bucket's versioning status (`Enabled`, `Suspended`), nil when it was never turned on.
    public func versioning(of bucket: String) async throws -> String? {
        let page = try await send(.GET, try S3Location(bucket: bucket, key: ""), query: "versioning", expecting: [200])
        return S3XML.value("Status", in: page.body).flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Deletes one object (absent is fine).
    public func delete(_ location: S3Location) async throws {
        _ = try await send(.DELETE, location, expecting: [200, 204, 404])
    }

    // MARK: requests

    struct Response {
        var status: Int
        var headers: HTTPHeaders
        var body: Data
    }

    /// A request body that can be sent again on a retry.
    enum Body {
        case empty
        case data(Data)
        case file(path: String, range: Range<Int64>)

        var count: Int64 {
            switch self {
            case .empty: 0
            case .data(let data): Int64(data.count)
            case .file(_, let range): Int64(range.count)
            }
        }
    }

    /// Sends one request with retries; the answer's body (an XML document, small) is read
    /// whole. A status outside `expecting` is thrown as ``S3Error``.
    func send(_ method: HTTPMethod, _ location: S3Location, query: String? = nil, headers: [(String, String)] = [],
              body: Body = .empty, expecting: Set<Int>) async throws -> Response {
        try await retrying(method, location) {
            let response = try await execute(method, location, query: query, headers: headers, body: body)
            let data = Data((try await response.body.collect(upTo: 4 << 20)).readableBytesView)
            let status = Int(response.status.code)
            guard expecting.contains(status) else { throw Self.error(method, location, status: status, body: data) }
            return Response(status: status, headers: response.headers, body: data)
        }
    }

    /// One signed request, its response's body left to the caller.
    func execute(_ method: HTTPMethod, _ location: S3Location, query: String? = nil, headers: [(String, String)] = [],
                 body: Body = .empty) async throws -> HTTPClientResponse {
        let url = configuration.url(for: location, query: query)
        // The hash the signature names, and the body that is sent: the same bytes.
        let hash: String, payload: HTTPClientRequest.Body?
        switch body {
        case .empty:
            (hash, payload) = (S3Signer.sha256Hex(Data()), nil)
        case .data(let data):
            (hash, payload) = (S3Signer.sha256Hex(data), .bytes(ByteBuffer(bytes: data)))
        case .file(let path, let range) where Int64(range.count) <= Self.bufferedBodyLimit:
            let bytes = try FileChunks.read(path, range: range)
            (hash, payload) = (bytes.withUnsafeReadableBytes { S3Signer.sha256Hex($0) }, .bytes(bytes))
        case .file(let path, let range):
            (hash, payload) = (try FileChunks.sha256Hex(path, range: range),
                               .stream(FileChunks(path: path, range: range), length: .known(Int64(range.count))))
        }
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = method
        for (name, value) in headers + signer.sign(method: method.rawValue, url: url, headers: headers, payloadHash: hash) {
            request.headers.add(name: name, value: value)
        }
        if let payload { request.body = payload }
        // A minute, or longer for a large body on a slow link (at least 1 MB/s).
        let timeout = TimeAmount.seconds(max(60, body.count >> 20))
        do {
            return try await http.execute(request, timeout: timeout)
        } catch {
            throw S3Error(method: method.rawValue, location: location, status: nil, code: nil, message: "no answer from \(configuration.endpoint.host ?? "S3"): \(error)")
        }
    }

    /// Runs `attempt` until it succeeds, fails for good, or ``tries`` transient failures.
    func retrying<T>(_ method: HTTPMethod, _ location: S3Location, _ attempt: () async throws -> T) async throws -> T {
        var delay = backoff
        for try_ in 1... {
            do {
                return try await attempt()
            } catch let error as S3Error where error.isTransient && try_ < tries {
                try await Task.sleep(for: delay * Double.random(in: 0.8...1.2))
                delay = min(delay * 2, .seconds(5))
            }
        }
        fatalError("unreachable")
    }

    static func error(_ method: HTTPMethod, _ location: S3Location, status: Int, body: Data) -> S3Error {
        let fields = S3XML.records(body).first ?? [:]
        let fallback = HTTPResponseStatus(statusCode: status).reasonPhrase
        return S3Error(method: method.rawValue, location: location, status: status, code: fields["Code"],
                       message: fields["Message"].flatMap { $0.isEmpty ? nil : $0 } ?? fallback)
    }
}
