import Fleet
import Foundation
import IngestdTesting
import Logging
import PostgresNIO
import Testing

/// `sslmode` and `sslrootcert` with libpq's meanings (#29 item 7), against the test's own
/// PostgreSQL with `ssl=on` and certificates `openssl` makes here: a CA of the test's own that
/// signed the server's certificate (for `localhost` only), and a second CA that must be refused.
/// Whether a session is encrypted is read from the server's `pg_stat_ssl`, not from the client.
@Suite(.serialized, .offTheSharedPool, .enabled(if: PostgresServer.binaries != nil, "PostgreSQL is not installed"))
struct DatabaseTLSTests {
    /// A server with TLS on, and the two CAs' certificate files.
    static func tlsServer() throws -> (server: PostgresServer, trusted: String, other: String) {
        let server = try PostgresServer(name: "tls")
        let directory = "\(server.directory)/tls"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        func openssl(_ arguments: [String]) throws {
            let result = try Tool.run("openssl", arguments)
            guard result.status == 0 else { throw Tool.ProbeFailure(message: "openssl \(arguments.first ?? ""): \(result.stderr)") }
        }
        for ca in ["trusted", "other"] {
            try openssl(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=ingestd test \(ca) CA",
                         "-keyout", "\(directory)/\(ca).key", "-out", "\(directory)/\(ca).pem"])
        }
        try openssl(["req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost", "-keyout", "\(directory)/server.key",
                     "-out", "\(directory)/server.csr"])
        try Data("subjectAltName=DNS:localhost\n".utf8).write(to: URL(fileURLWithPath: "\(directory)/san.ext"))
        try openssl(["x509", "-req", "-in", "\(directory)/server.csr", "-CA", "\(directory)/trusted.pem", "-CAkey", "\(directory)/trusted.key",
                     "-CAcreateserial", "-days", "2", "-extfile", "\(directory)/san.ext", "-out", "\(directory)/server.pem"])
        chmod("\(directory)/server.key", 0o600)
        if getuid() == 0 { _ = try Tool.run("chown", ["-R", "postgres:postgres", directory]) }
        try server.stop()
        server.settings = ["ssl=on", "ssl_cert_file=\(directory)/server.pem", "ssl_key_file=\(directory)/server.key"]
        try server.start()
        return (server, "\(directory)/trusted.pem", "\(directory)/other.pem")
    }

    enum Outcome: Equatable {
        case success(Bool)
        case failure(String)
    }

    /// Connects with `url` and returns `pg_stat_ssl.ssl` for the session, or the error's account.
    static func encrypted(_ url: String) async -> Outcome {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        do {
            return .success(try await DatabaseURL(url).withClient(logger: logger) { [logger] client in
                let rows = try await client.query("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()", logger: logger)
                for try await ssl in rows.decode(Bool.self) { return ssl }
                return false
            })
        } catch {
            return .failure(describeDatabaseError(error))
        }
    }

    @Test func sslModesMeanWhatTheyMeanToLibpq() async throws {
        let (server, trusted, other) = try Self.tlsServer()
        let localhost = "postgres://ingestd@localhost:\(server.port)/ingestd"
        let loopback = "postgres://ingestd@127.0.0.1:\(server.port)/ingestd"

        #expect(await Self.encrypted("\(localhost)?sslmode=verify-full&sslrootcert=\(trusted)") == .success(true))
        #expect(await Self.encrypted("\(localhost)?sslmode=disable") == .success(false))
        #expect(await Self.encrypted(localhost) == .success(true), "prefer (the default) encrypts when the server offers TLS")
        #expect(await Self.encrypted("\(loopback)?sslmode=require") == .success(true), "require without a root: encrypted, not verified")
        // The certificate names localhost only: verify-ca accepts it on 127.0.0.1, verify-full does not.
        #expect(await Self.encrypted("\(loopback)?sslmode=verify-ca&sslrootcert=\(trusted)") == .success(true))
        guard case .failure(let mismatch) = await Self.encrypted("\(loopback)?sslmode=verify-full&sslrootcert=\(trusted)") else {
            Issue.record("verify-full accepted a certificate for another name")
            return
        }
        #expect(mismatch.contains("TLS"), "\(mismatch)")
        // A CA that did not sign the server's certificate is refused, with require too (a root given means verify).
        for mode in ["verify-full", "verify-ca", "require"] {
            guard case .failure(let refused) = await Self.encrypted("\(localhost)?sslmode=\(mode)&sslrootcert=\(other)") else {
                Issue.record("\(mode) trusted a certificate another CA signed")
                continue
            }
            #expect(refused.contains("TLS handshake failed"), "\(mode): \(refused)")
        }
        // The commands say so in their own words, with a failing status.
        let status = try Tool.run(Paths.binary, ["status", "--json", "--database", "\(localhost)?sslmode=verify-full&sslrootcert=\(other)"])
        #expect(status.status != 0 && (status.stdout + status.stderr).contains("TLS"), "\(status.stdout) \(status.stderr)")
    }

    @Test func aServerWithoutTLSIsRefusedWhenTLSIsRequired() async throws {
        let server = try PostgresServer(name: "plain")
        guard case .failure(let refused) = await Self.encrypted("\(server.url)?sslmode=require") else {
            Issue.record("sslmode=require connected without TLS")
            return
        }
        #expect(refused.contains("TLS refused"), "\(refused)")
        #expect(await Self.encrypted("\(server.url)?sslmode=prefer") == .success(false))
        let bad = try Tool.run(Paths.binary, ["status", "--database", "\(server.url)?sslmode=sometimes"])
        #expect(bad.status == 64 && bad.stderr.contains("sslmode"), "\(bad.stderr)")
    }
}
