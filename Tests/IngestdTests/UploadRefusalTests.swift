import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import IngestdTesting
import Logging
import Testing
import Uploads

/// `ingestd serve`'s token refusals through its router (HummingbirdTesting's `.router`: no port,
/// no tus client), over a fresh spool: no token, a forged or malformed one, an expired one, one of
/// the other scope, one for another upload — each `401` with its line of text and the tus
/// headers, counted by reason; `Tus-Resumable` checked before the token; the routes without a
/// token answered without one; a good token gets through.
@Suite struct UploadRefusalTests {
    static let secret = Array("upload-refusals-secret-0123456789abcdef".utf8)
    static let tus: HTTPFields = [.tusResumable: "1.0.0"]
    static let routes: [(String, HTTPRequest.Method, HTTPFields)] = [
        ("/v1/uploads", .post, tus + [.uploadLength: "10"]), ("/v1/uploads/clip-1/0", .head, tus),
        ("/v1/uploads/clip-1/0", .patch, tus + [.uploadOffset: "0", .contentType: "application/offset+octet-stream"]),
        ("/v1/uploads/clip-1/0", .delete, tus), ("/v1/jobs/clip-1", .get, [:]),
    ]

    @Test func withoutATokenEveryTokenRouteIs401() async throws {
        try await Self.server("no-token").test(.router) { client in
            for (path, method, headers) in Self.routes {
                for uri in [path, "\(path)?token=", "\(path)?other=1"] {
                    let response = try await client.execute(uri: uri, method: method, headers: headers, body: ByteBuffer(string: "0123456789"))
                    Self.expectRefusal(response, "no token (the URL's ?token=)", "\(method) \(uri)")
                }
            }
            try await Self.expectCounted(client, ["token_invalid": 15])
        }
    }

    @Test func aForgedOrMalformedTokenIs401() async throws {
        let good = Self.token(.upload, "clip-1")
        let forged = [Self.token(.upload, "clip-1", secret: Array("another secret".utf8)), good.replacingOccurrences(of: ".clip-1.", with: ".clip-2.")]
        let malformed = ["v1.upload.clip-1", "v2" + good.dropFirst(2), good + "A", String(good.dropLast(4))]
        try await Self.server("forged").test(.router) { client in
            for (path, method, headers) in Self.routes {
                for token in forged {
                    Self.expectRefusal(try await Self.send(client, path, method, headers, token: token), "the token's signature does not match", "\(method) \(path)")
                }
                for token in malformed {
                    Self.expectRefusal(try await Self.send(client, path, method, headers, token: token), "the token is malformed", "\(method) \(path) \(token)")
                }
            }
            try await Self.expectCounted(client, ["token_invalid": 30])
        }
    }

    @Test func anExpiredTokenIs401() async throws {
        let past = Int64(Date().timeIntervalSince1970) - 1
        try await Self.server("expired").test(.router) { client in
            for (path, method, headers) in Self.routes {
                let token = Self.token(method == .get ? .status : .upload, "clip-1", expires: past)
                Self.expectRefusal(try await Self.send(client, path, method, headers, token: token), "the token has expired", "\(method) \(path)")
            }
            // Expiry is checked before scope: an expired token of the other scope is "expired".
            let other = try await Self.send(client, "/v1/jobs/clip-1", .get, [:], token: Self.token(.upload, "clip-1", expires: past))
            Self.expectRefusal(other, "the token has expired", "expired upload token on the status route")
            try await Self.expectCounted(client, ["token_expired": 6])
        }
    }

    @Test func aTokenOfTheOtherScopeIs401() async throws {
        try await Self.server("scope").test(.router) { client in
            for (path, method, headers) in Self.routes {
                let token = Self.token(method == .get ? .upload : .status, "clip-1")
                Self.expectRefusal(try await Self.send(client, path, method, headers, token: token), "the token is not for this kind of request", "\(method) \(path)")
            }
            try await Self.expectCounted(client, ["token_invalid": 5])
        }
    }

    @Test func aTokenForAnotherUploadIs401() async throws {
        try await Self.server("other-id").test(.router) { client in
            for (path, method, headers) in Self.routes where method != .post {
                let token = Self.token(method == .get ? .status : .upload, "clip-2")
                Self.expectRefusal(try await Self.send(client, path, method, headers, token: token), "the token is for another upload", "\(method) \(path)")
            }
            // Before the path's id is looked at: one that can name no upload is still "another upload".
            let odd = try await Self.send(client, "/v1/uploads/..%2Fx/0", .head, Self.tus, token: Self.token(.upload, "clip-1"))
            Self.expectRefusal(odd, "the token is for another upload", "HEAD of an id no upload can have")
            try await Self.expectCounted(client, ["token_other_upload": 5])
        }
    }

    @Test func theTusVersionIsCheckedBeforeTheToken() async throws {
        try await Self.server("version").test(.router) { client in
            for (path, method, _) in Self.routes where method != .get {
                let response = try await client.execute(uri: path, method: method, headers: [.uploadLength: "10"])
                #expect(response.status == .preconditionFailed && response.headers[.tusVersion] == "1.0.0", "\(method) \(path)")
                #expect(String(buffer: response.body) == "Tus-Resumable: 1.0.0 is required\n")
            }
            // The status route is no tus route: a good status token for a job never made is a 404.
            let status = try await Self.send(client, "/v1/jobs/clip-1", .get, [:], token: Self.token(.status, "clip-1"))
            #expect(status.status == .notFound && String(buffer: status.body) == "no upload or job clip-1\n")
            try await Self.expectCounted(client, ["bad_version": 4, "unknown": 1])
        }
    }

    @Test func theRoutesWithoutATokenAnswerWithoutOne() async throws {
        try await Self.server("open").test(.router) { client in
            let options = try await client.execute(uri: "/v1/uploads", method: .options)
            #expect(options.status == .noContent && options.headers[.tusVersion] == "1.0.0" && options.headers[.tusResumable] == "1.0.0")
            for (uri, start) in [("/healthz", "ok\n"), ("/openapi.yaml", "openapi:"), ("/metrics", "")] {
                let response = try await client.execute(uri: uri, method: .get)
                #expect(response.status == .ok && String(buffer: response.body).hasPrefix(start), "\(uri)")
            }
            let unknown = try await client.execute(uri: "/v1/uploads/clip-1", method: .get)
            #expect(unknown.status == .notFound && unknown.headers[.tusResumable] == nil, "the router's own 404, not a refusal")
        }
    }

    @Test func aGoodTokenGetsThroughAndARefusedBodyIsNotWritten() async throws {
        let token = Self.token(.upload, "clip-1")
        try await Self.server("good").test(.router) { client in
            let created = try await Self.send(client, "/v1/uploads", .post, Self.tus + [.uploadLength: "10"], token: token)
            #expect(created.status == .created && created.headers[.location] == "/v1/uploads/clip-1/1?token=\(token)")
            let body = Self.tus + [.uploadOffset: "0", .contentType: "application/offset+octet-stream"]
            let refused = try await Self.send(client, "/v1/uploads/clip-1/1", .patch, body, token: Self.token(.upload, "clip-1", secret: [1, 2, 3]))
            Self.expectRefusal(refused, "the token's signature does not match", "PATCH with a forged token")
            let head = try await Self.send(client, "/v1/uploads/clip-1/1", .head, Self.tus, token: token)
            #expect(head.status == .ok && head.headers[.uploadOffset] == "0" && head.headers[.uploadLength] == "10")
            let patched = try await Self.send(client, "/v1/uploads/clip-1/1", .patch, body, token: token, body: "01234")
            #expect(patched.status == .noContent && patched.headers[.uploadOffset] == "5", "\(patched.status) \(String(buffer: patched.body))")
        }
    }

    // MARK: Helpers

    /// `ingestd serve --spool` over a fresh spool, signing with ``secret``.
    static func server(_ name: String) throws -> some ApplicationProtocol {
        let base = Paths.scratch("upload-refusals-\(name)")
        try? FileManager.default.removeItem(atPath: base)
        try FileManager.default.createDirectory(atPath: "\(base)/spool", withIntermediateDirectories: true)
        var logger = Logger(label: "upload-refusals")
        logger.logLevel = .error
        let configuration = UploadServer.Configuration(host: "127.0.0.1", port: 0, spool: "\(base)/spool", secret: secret)
        return try UploadServer.make(configuration, metrics: UploadMetrics(), logger: logger)
    }

    static func token(_ scope: UploadToken.Scope, _ id: String, expires: Int64? = nil, secret: [UInt8] = secret) -> String {
        UploadToken(scope: scope, id: id, maxBytes: 1_000_000, expires: expires ?? Int64(Date().timeIntervalSince1970) + 3600).encoded(secret: secret)
    }

    static func send(_ client: some TestClientProtocol, _ path: String, _ method: HTTPRequest.Method, _ headers: HTTPFields, token: String,
                     body: String = "0123456789") async throws -> TestResponse {
        try await client.execute(uri: "\(path)?token=\(token)", method: method, headers: headers, body: ByteBuffer(string: body))
    }

    /// A refusal as `serve` answers one: `401`, the tus header, one line of text, and the connection closed after it.
    static func expectRefusal(_ response: TestResponse, _ message: String, _ comment: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(response.status == .unauthorized, "\(comment): \(response.status)", sourceLocation: sourceLocation)
        #expect(String(buffer: response.body) == message + "\n", "\(comment)", sourceLocation: sourceLocation)
        #expect(response.headers[.tusResumable] == "1.0.0" && response.headers[.contentType] == "text/plain; charset=utf-8"
                    && response.headers[.connection] == "close", "\(comment): \(response.headers)", sourceLocation: sourceLocation)
    }

    /// `/metrics` counts the refusals by reason.
    static func expectCounted(_ client: some TestClientProtocol, _ counts: [String: Int], sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let text = String(buffer: try await client.execute(uri: "/metrics", method: .get).body)
        for (reason, count) in counts {
            #expect(text.contains("ingestd_upload_refusals_total{reason=\"\(reason)\"} \(count)\n"), "\(reason): \(text)", sourceLocation: sourceLocation)
        }
    }
}

extension HTTPField.Name {
    fileprivate static let tusResumable = Self("Tus-Resumable")!
    fileprivate static let tusVersion = Self("Tus-Version")!
    fileprivate static let uploadLength = Self("Upload-Length")!
    fileprivate static let uploadOffset = Self("Upload-Offset")!
}

extension HTTPFields {
    fileprivate static func + (a: HTTPFields, b: HTTPFields) -> HTTPFields {
        var sum = a
        for field in b { sum[field.name] = field.value }
        return sum
    }
}
