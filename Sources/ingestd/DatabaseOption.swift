import ArgumentParser
import Fleet
import Foundation

/// `--database URL`, `--database-url-file FILE` or `INGESTD_DATABASE_URL`, shared by the queue
/// commands. A URL with a password belongs in the file or the environment, never in arguments
/// (every process can read every other's command line); the environment variable is removed
/// once read, and job processes never see either.
struct DatabaseOption: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "PostgreSQL URL of the job queue, postgres://user@host:5432/database (default: $INGESTD_DATABASE_URL). Keep a password out of arguments: use --database-url-file or the environment.",
        valueName: "url"))
    var database: String?

    @Option(help: ArgumentHelp("File holding the PostgreSQL URL (with its password), e.g. a mounted secret.", valueName: "file"))
    var databaseUrlFile: String?

    @Option(help: ArgumentHelp("Seconds one database call may take before its connection is closed and the call fails (a silent network, a frozen server).", valueName: "seconds"))
    var databaseTimeout: Double = 10

    @Option(help: ArgumentHelp("Most connections this process opens to PostgreSQL (default: --jobs + 4 for workers: claims, a renewal per job, LISTEN, the webhook sender; 4 for other commands).", valueName: "n"))
    var databaseConnections: Int?

    /// Whether a database is configured (the file is read only by ``resolve()``).
    var isGiven: Bool { database != nil || databaseUrlFile != nil || ProcessInfo.processInfo.environment["INGESTD_DATABASE_URL"] != nil }

    func validate() throws {
        guard database == nil || databaseUrlFile == nil else { throw ValidationError("give --database or --database-url-file, not both") }
        guard databaseTimeout >= 0.5 else { throw ValidationError("--database-timeout must be at least 0.5 seconds") }
        guard (databaseConnections ?? 2) >= 2 else { throw ValidationError("--database-connections must be at least 2 (LISTEN holds one)") }
    }

    /// The database; `jobs`: the jobs this process runs at once (its pool is sized for them).
    func resolve(jobs: Int = 0) throws -> DatabaseURL {
        let environment = ProcessInfo.processInfo.environment["INGESTD_DATABASE_URL"]
        SecretEnvironment.forget(["INGESTD_DATABASE_URL"])
        var url = database ?? environment
        if let databaseUrlFile {
            do {
                url = try String(contentsOfFile: databaseUrlFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
            } catch {
                throw ValidationError("--database-url-file \(databaseUrlFile): cannot read it (\(error.localizedDescription))")
            }
        }
        guard let url else { throw ValidationError("--database URL, --database-url-file FILE or INGESTD_DATABASE_URL is required") }
        do {
            var resolved = try DatabaseURL(url)
            resolved.callTimeout = .milliseconds(Int64(databaseTimeout * 1000))
            resolved.maximumConnections = databaseConnections ?? (jobs + 4)
            return resolved
        } catch {
            throw ValidationError("\(error)")
        }
    }
}
