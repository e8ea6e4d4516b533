import ArgumentParser
import Fleet
import Foundation

/// `--database URL` (or `INGESTD_DATABASE_URL`), shared by the queue commands.
struct DatabaseOption: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "PostgreSQL URL of the job queue, postgres://user:password@host:5432/database (default: $INGESTD_DATABASE_URL).",
        valueName: "url"))
    var database: String?

    /// The URL given, or nil when neither the flag nor the environment names one.
    var url: String? { database ?? ProcessInfo.processInfo.environment["INGESTD_DATABASE_URL"] }

    func resolve() throws -> DatabaseURL {
        guard let url else { throw ValidationError("--database URL (or INGESTD_DATABASE_URL) is required") }
        do {
            return try DatabaseURL(url)
        } catch {
            throw ValidationError("\(error)")
        }
    }
}
