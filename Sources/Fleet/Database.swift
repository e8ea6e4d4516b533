import Foundation
import Logging
import PostgresNIO

/// Where the job queue lives: a `postgres://user:password@host:port/database` URL (from
/// `--database` or `INGESTD_DATABASE_URL`), turned into a client configuration.
public struct DatabaseURL: Sendable, CustomStringConvertible {
    public let configuration: PostgresClient.Configuration
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
        description = "postgres://\(url.user ?? "postgres")@\(host):\(port)/\(database ?? "")"
    }

    /// A client for this database; run it (``withClient(_:logger:_:)`` does) before using it.
    public func makeClient(logger: Logger) -> PostgresClient {
        PostgresClient(configuration: configuration, backgroundLogger: logger)
    }

    /// Runs `body` with a running client, then shuts the client down.
    public func withClient<T: Sendable>(logger: Logger, _ body: @Sendable (PostgresClient) async throws -> T) async throws -> T {
        let client = makeClient(logger: logger)
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { await client.run(); return nil }
            defer { group.cancelAll() }
            return try await body(client)
        }
    }
}
