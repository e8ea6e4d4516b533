import Console
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Ingest
import IngestdTesting
import Logging
import Testing
import Transcode

/// The console's refusals through its router (HummingbirdTesting's `.router`: no port, no
/// browser), over an empty spool: no credential `401`, a read token acting `403`, a write from
/// another site `403`; and the login cookie and the retry form that get past them.
@Suite struct ConsoleRefusalTests {
    static let readToken = "read-0123456789abcdef0123", operateToken = "operate-0123456789abcdef0123"

    @Test func withoutACredentialEveryPageIs401() async throws {
        try await Self.console("unauthenticated").test(.router) { client in
            let script = try await client.execute(uri: "/console/jobs", method: .get, headers: [.accept: "application/json"])
            #expect(script.status == .unauthorized && script.headers[.wwwAuthenticate] == "Bearer realm=\"ingestd console\"")
            let browser = try await client.execute(uri: "/console/jobs?state=failed", method: .get)
            #expect(browser.status == .unauthorized && String(buffer: browser.body).contains("name=\"token\""), "a browser gets the login form")
            #expect(browser.headers[.contentSecurityPolicy]?.contains("default-src 'none'") == true, "refusals carry the console's headers")
            for (uri, headers): (String, HTTPFields) in [
                ("/console/", [.authorization: "Bearer not-a-token-at-all"]),
                ("/console/?window=day", [:]),
                ("/console/events?view=overview:day", [:]),
                ("/console/media/job-a/master.m3u8", [.cookie: "ingestd_console=not-a-token-at-all"]),
                ("/console/events", [.cookie: "ingestd_console=not-a-token-at-all"]),
                ("/console/jobs/some-job", [.authorization: "Basic \(Self.operateToken)", .cookie: "ingestd_console=\(Self.operateToken)"]),
            ] {
                let response = try await client.execute(uri: uri, method: .get, headers: headers)
                #expect(response.status == .unauthorized, "\(uri) \(headers)")
            }
            let write = try await client.execute(uri: "/console/jobs/retry", method: .post, body: ByteBuffer(string: "id=a"))
            #expect(write.status == .unauthorized)
        }
    }

    @Test func aReadTokenMayReadButNotRetry() async throws {
        try await Self.console("read-token").test(.router) { client in
            let page = try await client.execute(uri: "/console/jobs", method: .get, headers: [.authorization: "Bearer \(Self.readToken)"])
            #expect(page.status == .ok && String(buffer: page.body).contains("All jobs"))
            let read: HTTPFields = [.authorization: "Bearer \(Self.readToken)"]
            let day = try await client.execute(uri: "/console/?window=day", method: .get, headers: read)
            #expect(day.status == .ok && String(buffer: day.body).contains("data-window=\"day\"") && String(buffer: day.body).contains("svg class=\"chart\""))
            let media = try await client.execute(uri: "/console/media/job-a/master.m3u8", method: .get, headers: read)
            #expect(media.status == .ok && String(buffer: media.body) == "#EXTM3U\n" && media.headers[.contentType] == "application/vnd.apple.mpegurl"
                    && media.headers[HTTPField.Name("Cross-Origin-Resource-Policy")!] == "same-origin")
            for foreign: HTTPFields in [[HTTPField.Name("Sec-Fetch-Site")!: "cross-site"], [.origin: "http://evil.example"]] {
                let embedded = try await client.execute(uri: "/console/media/job-a/master.m3u8", method: .get,
                                                        headers: [.cookie: "ingestd_console=\(Self.readToken)"] + foreign)
                #expect(embedded.status == .forbidden, "\(foreign)")
            }
            for credential: HTTPFields in [[.authorization: "Bearer \(Self.readToken)"], [.cookie: "other=1; ingestd_console=\(Self.readToken)"]] {
                let write = try await client.execute(uri: "/console/jobs/retry", method: .post, headers: credential + Self.form, body: ByteBuffer(string: "id=a"))
                #expect(write.status == .forbidden && String(buffer: write.body) == "this token may read, not act (its role is read)\n")
            }
        }
    }

    @Test func aWriteFromAnotherSiteIs403() async throws {
        try await Self.console("cross-site").test(.router) { client in
            let operate: HTTPFields = [.authorization: "Bearer \(Self.operateToken)"] + Self.form
            for foreign: HTTPFields in [[HTTPField.Name("Sec-Fetch-Site")!: "cross-site"], [.origin: "http://evil.example"],
                                         [HTTPField.Name("Sec-Fetch-Site")!: "same-site"]] {
                let write = try await client.execute(uri: "/console/jobs/retry", method: .post, headers: operate + foreign, body: ByteBuffer(string: "id=a"))
                #expect(write.status == .forbidden && String(buffer: write.body).hasPrefix("refused: a write from another site"), "\(foreign)")
                let login = try await client.execute(uri: "/console/login", method: .post, headers: Self.form + foreign,
                                                     body: ByteBuffer(string: "token=\(Self.operateToken)"))
                #expect(login.status == .forbidden && login.headers[.setCookie] == nil, "\(foreign)")
                let logout = try await client.execute(uri: "/console/logout", method: .post, headers: foreign)
                #expect(logout.status == .forbidden, "\(foreign)")
            }
            // From this console's own page (this server's origin), the write gets past the checks.
            let own: HTTPFields = [HTTPField.Name("Sec-Fetch-Site")!: "same-origin", .origin: "http://localhost"]
            let empty = try await client.execute(uri: "/console/jobs/retry", method: .post, headers: operate + own, body: ByteBuffer(string: "back=/console/jobs"))
            #expect(empty.status == .badRequest && String(buffer: empty.body).hasPrefix("name the jobs to retry"))
        }
    }

    @Test func theLoginCookieCarriesTheOperatorsRetryForm() async throws {
        try await Self.console("login").test(.router) { client in
            let wrong = try await client.execute(uri: "/console/login", method: .post, headers: Self.form,
                                                 body: ByteBuffer(string: "token=not-a-token-at-all&back=%2Fconsole%2Fjobs"))
            #expect(wrong.status == .unauthorized && wrong.headers[.setCookie] == nil)
            let login = try await client.execute(uri: "/console/login", method: .post, headers: Self.form,
                                                 body: ByteBuffer(string: "token=\(Self.operateToken)&back=%2Fconsole%2Fjobs%3Fstate%3Dfailed"))
            #expect(login.status == .seeOther && login.headers[.location] == "/console/jobs?state=failed")
            let cookie = login.headers[.setCookie] ?? ""
            let attributes = Set(cookie.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) })
            #expect(attributes == ["ingestd_console=\(Self.operateToken)", "Path=/console", "HttpOnly", "SameSite=Strict", "Max-Age=43200"], "\(cookie)")
            // Two boxes ticked (`id[]` repeated): neither job is failed, both skipped.
            let retry = try await client.execute(uri: "/console/jobs/retry", method: .post,
                                                 headers: Self.form + [.cookie: "ingestd_console=\(Self.operateToken)", .accept: "application/json"],
                                                 body: ByteBuffer(string: "id[]=job-b&id[]=job-a&id[]=&rejected=1"))
            let answer = try JSONSerialization.jsonObject(with: Data(String(buffer: retry.body).utf8)) as? [String: [String]]
            #expect(retry.status == .ok && answer == ["retried": [], "skipped": ["job-a", "job-b"]], "\(String(buffer: retry.body))")
            let garbled = try await client.execute(uri: "/console/jobs/retry", method: .post, headers: Self.form + [.authorization: "Bearer \(Self.operateToken)"],
                                                   body: ByteBuffer(string: "id=%zz"))
            #expect(garbled.status == .badRequest)
            let logout = try await client.execute(uri: "/console/logout", method: .post)
            #expect(logout.status == .seeOther && logout.headers[.location] == "/console/login")
            #expect(logout.headers[.setCookie]?.contains("ingestd_console=;") == true && logout.headers[.setCookie]?.contains("Max-Age=0") == true)
        }
    }

    static let form: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]

    /// The console as `ingestd console --spool` makes it, over a fresh empty spool, with one
    /// read and one operate token.
    static func console(_ name: String) async throws -> some ApplicationProtocol {
        let base = Paths.scratch("console-refusals-\(name)")
        try? FileManager.default.removeItem(atPath: base)
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        let tokensFile = "\(base)/tokens"
        #expect(FileManager.default.createFile(atPath: tokensFile, contents: Data("read \(readToken)\noperate \(operateToken)\n".utf8),
                                               attributes: [.posixPermissions: 0o600]))
        let store = SpoolStore(layout: SpoolLayout(root: "\(base)/spool"))
        try await store.prepare()
        try FileManager.default.createDirectory(atPath: "\(base)/cdn/job-a", withIntermediateDirectories: true)
        try Data("#EXTM3U\n".utf8).write(to: URL(fileURLWithPath: "\(base)/cdn/job-a/master.m3u8"))
        var logger = Logger(label: "console-refusals")
        logger.logLevel = .error
        let configuration = ConsoleServer.Configuration(host: "127.0.0.1", port: 0, tokens: try ConsoleTokens(path: tokensFile),
                                                        media: ConsoleMediaSource(root: "\(base)/cdn", storage: nil), fleet: false,
                                                        limits: Preset.builtIn.limits, refresh: .seconds(60))
        return try ConsoleServer.make(configuration, store: store, logger: logger)
    }
}

extension HTTPFields {
    fileprivate static func + (a: HTTPFields, b: HTTPFields) -> HTTPFields {
        var sum = a
        sum.append(contentsOf: b)
        return sum
    }
}
