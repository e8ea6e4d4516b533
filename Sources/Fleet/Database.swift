import Foundation
import Logging
import PostgresNIO

/// Where the job queue lives: a `postgres://user:password@host:port/database?param=value` URL
/// (from `--database`, `--database-url-file` or `INGESTD_DATABASE_URL`), turned into a client
/// configuration. The parameters mean what they mean to libpq: `sslmode` (`disable`, `allow`,
/// `prefer` (the default), `require`, `verify-ca`, `verify-full`), `sslrootcert` (a PEM file of
/// trusted CAs; `system` for the system's; with it, `require` verifies as `verify-ca` does),
/// `connect_timeout` (seconds) and `application_name`.
///
/// Every session also gets the timeouts a worker needs on a bad network (``sessionSettings``):
/// a statement, a lock wait or an open transaction whose client went quiet is ended by the
/// server, so a lost worker never holds a job row's lock for longer than a few seconds.
public struct DatabaseURL: Sendable, CustomStringConvertible {
    public private(set) var configuration: PostgresClient.Configuration
    /// The same server, for a single connection.
    let connection: PostgresConnection.Configuration
    /// The URL with the password hidden, for logs and messages.
    public let description: String
    /// How long one call may take (``JobQueue/timeout``): `--database-timeout`.
    public var callTimeout: Duration = .seconds(10)
    /// The most connections this process's pool opens (`--database-connections`); LISTEN
    /// holds one of them for as long as the worker runs.
    public var maximumConnections: Int {
        get { configuration.options.maximumConnections }
        set { configuration.options.maximumConnections = max(2, newValue) }
    }

    public struct Invalid: Error, CustomStringConvertible {
        public var description: String
    }

    /// Set on every session: `statement_timeout`, `lock_timeout`,
    /// `idle_in_transaction_session_timeout` and the server's TCP keepalives.
    public static let sessionSettings: [(String, String)] = [
        ("statement_timeout", "30s"),
        ("lock_timeout", "10s"),
        ("idle_in_transaction_session_timeout", "30s"),
        ("tcp_keepalives_idle", "30"),
        ("tcp_keepalives_interval", "10"),
        ("tcp_keepalives_count", "3"),
    ]

    public init(_ string: String) throws {
        guard let url = URLComponents(string: string), ["postgres", "postgresql"].contains(url.scheme ?? ""),
              let host = url.host, !host.isEmpty else {
            throw Invalid(description: "database URL must look like postgres://user:password@host:5432/database")
        }
        let port = url.port ?? 5432
        guard (1...65535).contains(port) else { throw Invalid(description: "database URL: port \(port) is out of range") }
        let database = url.path.isEmpty ? nil : String(url.path.dropFirst())
        var parameters: [String: String] = [:]
        for item in url.queryItems ?? [] { parameters[item.name] = item.value ?? "" }
        let known: Set = ["sslmode", "sslrootcert", "connect_timeout", "application_name"]
        if let unknown = parameters.keys.sorted().first(where: { !known.contains($0) }) {
            throw Invalid(description: "database URL: unsupported parameter \(unknown) (supported: \(known.sorted().joined(separator: ", ")))")
        }
        let tls = try Self.tls(mode: parameters["sslmode"] ?? "prefer", rootCertificate: parameters["sslrootcert"])
        let clientTLS: PostgresClient.Configuration.TLS = tls.map { $0.required ? .require($0.configuration) : .prefer($0.configuration) } ?? .disable
        let connectionTLS: PostgresConnection.Configuration.TLS = try tls.map {
            let context = try NIOSSLContext(configuration: $0.configuration)
            return $0.required ? .require(context) : .prefer(context)
        } ?? .disable
        var timeout = Duration.seconds(10)
        if let text = parameters["connect_timeout"] {
            guard let seconds = Int(text), seconds >= 0 else { throw Invalid(description: "database URL: connect_timeout must be whole seconds, got \(text)") }
            if seconds > 0 { timeout = .seconds(max(2, seconds)) }  // libpq: 0 is no limit, at least 2
        }
        var startup = Self.sessionSettings
        startup.append(("application_name", parameters["application_name"] ?? "ingestd"))

        var configuration = PostgresClient.Configuration(host: host, port: port, username: url.user ?? "postgres",
                                                         password: url.password, database: database, tls: clientTLS)
        configuration.options.connectTimeout = timeout
        configuration.options.additionalStartupParameters = startup
        self.configuration = configuration
        var connection = PostgresConnection.Configuration(host: host, port: port, username: url.user ?? "postgres",
                                                          password: url.password, database: database, tls: connectionTLS)
        connection.options.connectTimeout = .init(timeout)
        connection.options.additionalStartupParameters = startup
        self.connection = connection
        description = "postgres://\(url.user ?? "postgres")@\(host):\(port)/\(database ?? "")"
    }

    /// libpq's `sslmode`: nil for `disable`; `required` is false for `allow` and `prefer`
    /// (encrypted when the server offers it, plain otherwise).
    private static func tls(mode: String, rootCertificate: String?) throws -> (configuration: TLSConfiguration, required: Bool)? {
        switch mode {
        case "disable": return nil
        case "allow", "prefer", "require", "verify-ca", "verify-full": break
        default:
            throw Invalid(description: "database URL: sslmode must be disable, allow, prefer, require, verify-ca or verify-full, got \(mode)")
        }
        var tls = TLSConfiguration.makeClientConfiguration()
        let verify = mode == "verify-ca" || mode == "verify-full" || (mode == "require" && rootCertificate != nil)
        tls.certificateVerification = !verify ? .none : mode == "verify-full" ? .fullVerification : .noHostnameVerification
        if verify, let rootCertificate, rootCertificate != "system" {
            guard FileManager.default.isReadableFile(atPath: rootCertificate) else {
                throw Invalid(description: "database URL: sslrootcert \(rootCertificate) cannot be read")
            }
            tls.trustRoots = .file(rootCertificate)
        }
        return (tls, mode != "allow" && mode != "prefer")
    }

    /// A client for this database; run it (``withClient(_:logger:_:)`` does) before using it.
    /// The pool's own lines (one per failed connection attempt, at info) are kept to warnings
    /// and above: a worker says once per backoff step that the database is unreachable.
    public func makeClient(logger: Logger) -> PostgresClient {
        var background = logger
        background.logLevel = max(.warning, logger.logLevel)
        return PostgresClient(configuration: configuration, backgroundLogger: background)
    }

    /// One plain connection, opened and closed: an unreachable server, a refused login or a
    /// missing database fails within the connect timeout with the server's own reason, where
    /// the pool would only say, after its retries, that no connection came.
    public func probe(logger: Logger) async throws {
        try await PostgresConnection.connect(configuration: connection, id: 0, logger: logger).close()
    }

    /// Runs `body` with a running client, then shuts the client down.
    /// For one-shot commands: the pool's own chatter (such as its warning when the first query
    /// races `run()`) is kept below errors; failures reach the caller as thrown errors.
    public func withClient<T: Sendable>(logger: Logger, _ body: @Sendable (PostgresClient) async throws -> T) async throws -> T {
        var background = logger
        background.logLevel = max(.error, logger.logLevel)
        try await probe(logger: background)
        let client = makeClient(logger: background)
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { await client.run(); return nil }
            defer { group.cancelAll() }
            try await client.ready()
            return try await body(client)
        }
    }
}

extension PostgresClient {
    /// Returns once the pool serves a connection. A lease asked for before `run()` has started
    /// can wait for ever on a loaded host (seen in the tests: the first statement of a fresh
    /// client hung); each try is bounded and given up, the next one made after `run()` began.
    public func ready(tries: Int = 5) async throws {
        for attempt in 1...tries {
            do {
                return try await withConnection(within: .seconds(3)) { _ in }
            } catch let timeout as DatabaseTimeout {
                if attempt == tries { throw timeout }
            }
        }
    }
}

/// A one-line account of a database error for logs and messages: the server's message (and
/// SQLSTATE) when there is one, the client's reason otherwise, never the query text.
public func describeDatabaseError(_ error: any Error) -> String {
    if let transaction = error as? PostgresTransactionError {
        return describeDatabaseError(transaction.closureError ?? transaction.commitError ?? transaction.beginError ?? transaction.rollbackError ?? error)
    }
    if let tls = error as? NIOSSLError { return "TLS handshake failed: \(tls)" }
    guard let psql = error as? PSQLError else { return "\(error)" }
    if psql.code == .sslUnsupported {
        return "TLS refused: the server does not offer TLS, and the URL's sslmode requires it"
    }
    if let underlying = psql.underlying, underlying is NIOSSLError || underlying is NIOSSLExtraError || underlying is BoringSSLError {
        return "TLS handshake failed (is sslrootcert the CA that signed the server's certificate, and the host the name in it?): \(underlying)"
    }
    if let info = psql.serverInfo, let message = info[.message] {
        return "\(message) (SQLSTATE \(info[.sqlState] ?? "?"))"
    }
    return [psql.code.description, psql.underlying.map { "\($0)" }].compactMap { $0 }.joined(separator: ": ")
}
