import ArgumentParser
import Fleet
import Foundation
import Ingest

struct DatabaseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "db",
        abstract: "Manage the PostgreSQL job queue's schema.",
        subcommands: [Migrate.self]
    )

    struct Migrate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Apply the queue's schema migrations (workers and submit also do this on start).",
            discussion: """
            Migrations are numbered and applied in order, in one transaction under an advisory \
            lock, so running this while workers start is safe.
              ingestd db migrate --database postgres://ingestd@db/ingestd
            """
        )

        @OptionGroup var databaseOption: DatabaseOption

        func run() async throws {
            let database = try databaseOption.resolve()
            let logger = Log.make(label: "ingestd.db")
            let applied = try await database.migrate(logger: logger)
            print(applied.isEmpty ? "schema is up to date (version \(QueueSchema.latest))"
                                  : "applied migrations \(applied.map(String.init).joined(separator: ", ")); schema version \(QueueSchema.latest)")
        }
    }
}

/// The queue could not be reached or refused the request (exit 69, EX_UNAVAILABLE).
struct QueueUnavailable: Error, CustomStringConvertible {
    var database: DatabaseURL
    var error: Error
    var description: String { "\(database): \(describeDatabaseError(error))" }
}

/// An input `submit` refuses; nothing was queued.
struct SubmitRefusal: Error, CustomStringConvertible {
    var refusal: UploadPrecheck.Refusal
    var description: String { "\(refusal.message) (nothing was queued)" }
}
