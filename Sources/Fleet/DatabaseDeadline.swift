import Foundation
import Ingest
import PostgresNIO
import Synchronization
import Transcode

/// A database call that did not answer within its deadline (a silent network path, a frozen
/// server): its connection was closed, so nothing it started can go on behind the caller's back.
public struct DatabaseTimeout: Error, CustomStringConvertible {
    public var seconds: Double
    public var description: String { "the database did not answer within \(seconds.formatted()) s (call given up, its connection closed)" }
}

extension PostgresClient {
    /// Runs `body` on one pooled connection, for at most `limit`. When the limit passes, the wait
    /// for a connection is cancelled or the connection is closed, which fails the query in flight
    /// (postgres-nio's queries cannot be cancelled, and a path that drops packets without a reset
    /// would hold them for ever); the server ends the session's open transaction by itself
    /// (`idle_in_transaction_session_timeout`, see ``DatabaseURL``). The limit counts only time in
    /// which this process ran (``StallTolerantClock``): a worker whose own threads were all busy
    /// does not blame the database for an answer it had no thread to read.
    public func withConnection<T: Sendable>(within limit: Duration,
                                            _ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        let held = HeldConnection()
        let answer: T?
        do {
            answer = try await withinDeadline(limit) {
                try await self.withConnection { connection in
                    // A connection handed over after the caller gave up runs nothing.
                    guard held.set(connection) else { throw DatabaseTimeout(seconds: limit.seconds) }
                    defer { held.release() }
                    return try await body(connection)
                }
            }
        } catch {
            held.giveUp()  // cancelled: whatever still runs on the connection is cut off too
            throw error
        }
        guard let answer else {
            held.giveUp()
            throw DatabaseTimeout(seconds: limit.seconds)
        }
        return answer
    }

    /// ``withConnection(within:_:)`` around one transaction; a failed COMMIT or closure throws
    /// the error itself, not postgres-nio's wrapper.
    public func withTransaction<T: Sendable>(within limit: Duration, logger: Logger,
                                             _ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        try await withConnection(within: limit) { connection in
            do {
                return try await connection.withTransaction(logger: logger) { try await body($0) }
            } catch let error as PostgresTransactionError {
                throw error.closureError ?? error.commitError ?? error.beginError ?? error
            }
        }
    }
}

/// The connection a deadline may have to close. Once the caller has given up, the connection
/// in use is closed (failing the query in flight) and one handed over later is refused.
private final class HeldConnection: Sendable {
    private let state = Mutex<(connection: PostgresConnection?, givenUp: Bool)>((nil, false))

    func set(_ connection: PostgresConnection) -> Bool {
        state.withLock {
            guard !$0.givenUp else { return false }
            $0.connection = connection
            return true
        }
    }

    func release() { state.withLock { $0.connection = nil } }

    func giveUp() {
        let connection = state.withLock { state -> PostgresConnection? in
            state.givenUp = true
            defer { state.connection = nil }
            return state.connection
        }
        if let connection { _ = connection.close() as EventLoopFuture<Void> }
    }
}
