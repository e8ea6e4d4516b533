import Foundation
import Logging
import PostgresNIO

/// Where the job queue lives: a `postgres://user:password@host:port/database` URL (from
/// `--database` or `INGESTD_DATABASE_URL`), turned into a client configuration.
public struct DatabaseURL: Sendable, CustomStringConvertible {
    public let configuration: PostgresClient.Configuration
    /// The same server, for a single connection.
    let connection: PostgresConnection.Configuration
    /// The URL with the password hidden, for logs and messages.
    public let description: String

    public struct Invalid: Error, CustomStringConvertible {
        public var description: String
    }

    public init(_ string: String) throws {
        guard let url = URLComponents(string: string), ["postgres", "postgresql"].contains(url.scheme ?? ""),
              let host = url.host, !host.isEmpty else {
            throw Invalid(description: "database URL must look like postgres://user:password@host:5432/database")
        }
        let port = url.port ?? 5432
        guard (1...65535).contains(port) else { throw Invalid(description: "database URL: port \(port) is out of range") }
        let database = url.path.isEmpty ? nil : String(url.path.dropFirst())
        var configuration = PostgresClient.Configuration(host: host, port: port, username: url.user ?? "postgres",
                                                         password: url.password, database: database, tls: .disable)
        configuration.options.connectTimeout = .seconds(5)
        self.configuration = configuration
        var connection = PostgresConnection.Configuration(host: host, port: port, username: url.user ?? "postgres",
                                                          password: url.password, database: database, tls: .disable)
        connection.options.connectTimeout = .seconds(5)
        self.connection = connection
        description = "postgres://\(url.user ?? "postgres")@\(host):\(port)/\(database ?? "")"
    }

    /// A client for this database; run it (``withClient(_:logger:_:)`` does) before using it.
    public func makeClient(logger: Logger) -> PostgresClient {
        PostgresClient(configuration: configuration, backgroundLogger: logger)
    }

    /// Runs `body` with a running client, then shuts the client down.
    /// For one-shot commands: the pool's own chatter (such as its warning when the first query
    /// races `run()`) is kept below errors; failures reach the caller as thrown errors.
    public func withClient<T: Sendable>(logger: Logger, _ body: @Sendable (PostgresClient) async throws -> T) async throws -> T {
        var background = logger
        background.logLevel = max(.error, logger.logLevel)
        // One plain connection first: an unreachable server fails within the connect timeout
        // with its own reason, rather than after the pool's retries with a circuit breaker's.
        try await PostgresConnection.connect(configuration: connection, id: 0, logger: background).close()
        let client = makeClient(logger: background)
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { await client.run(); return nil }
            defer { group.cancelAll() }
            return try await body(client)
        }
    }
}

/// A one-line account of a database error for logs and messages: the server's message (and
/// SQLSTATE) when there is one, the client's reason otherwise, never the query text.
public func describeDatabaseError(_ error: any Error) -> String {
    if let transaction = error as? PostgresTransactionError {
        return describeDatabaseError(transaction.closureError ?? transaction.commitError ?? transaction.beginError ?? transaction.rollbackError ?? error)
    }
    guard let psql = error as? PSQLError else { return "\(error)" }
    if let info = psql.serverInfo, let message = info[.message] {
        return "\(message) (SQLSTATE \(info[.sqlState] ?? "?"))"
    }
    return [psql.code.description, psql.underlying.map { "\($0)" }].compactMap { $0 }.joined(separator: ": ")
}
