import IngestdTesting
import Foundation
import Testing

/// The shape docs/ARCHITECTURE.md promises, read from the sources: guards, not goals.
@Suite struct ArchitectureTests {
    /// Every Swift file under `Sources/<module>`, with its text.
    static func sources(_ modules: [String]) throws -> [(path: String, text: String)] {
        try modules.flatMap { module -> [(path: String, text: String)] in
            let root = "\(Paths.root)/Sources/\(module)"
            let names = try #require(FileManager.default.enumerator(atPath: root)?.allObjects as? [String])
            return try names.filter { $0.hasSuffix(".swift") }.map { name in
                ("Sources/\(module)/\(name)", try String(contentsOfFile: "\(root)/\(name)", encoding: .utf8))
            }
        }
    }

    @Test func noFileOfTheLifecycleModulesIsOver250Lines() throws {
        let files = try Self.sources(["Ingest", "Fleet", "Storage"])
        #expect(files.count > 50)
        let long = files.filter { $0.text.split(separator: "\n", omittingEmptySubsequences: false).count > 250 }.map(\.path)
        #expect(long.isEmpty, "\(long)")
    }

    /// `AttemptOutput` holds an attempt's data; where the bytes go is the `OutputTarget`'s.
    @Test func theAttemptsDataMakesNoFileSystemCall() throws {
        let files = try Self.sources(["Ingest", "Fleet", "Storage", "ingestd"])
        let holders = files.filter { $0.text.contains("struct AttemptOutput") || $0.text.contains("extension AttemptOutput") }
        #expect(holders.map(\.path) == ["Sources/Ingest/Output/AttemptOutput.swift"])
        let calls = ["FileManager", "contentsOf", "write(to", "open(", "rename(", "unlink(", "mkdir(", "JSONFile", "Durab", "Staged", "GrowingVersion"]
        for (path, text) in holders {
            #expect(calls.filter { text.contains($0) }.isEmpty, "\(path): \(calls.filter { text.contains($0) })")
        }
    }

    /// Only the targets and the lower rooms they use touch a CDN's versions and pointers.
    @Test func onlyTheOutputTargetsReachTheCDNsRooms() throws {
        let files = try Self.sources(["Ingest", "Fleet", "Storage", "ingestd"])
        let rooms = ["GrowingVersion(", "DirectoryVersions(", "StagedDirectory(destination: destination, staging:", ".show(held.prefix", "storage.show("]
        let outside = files.filter { !$0.path.hasPrefix("Sources/Ingest/Output/") && !$0.path.hasPrefix("Sources/Ingest/Jobs/") }
            .filter { file in rooms.contains { file.text.contains($0) } }.map(\.path)
        #expect(outside.isEmpty, "\(outside)")
    }

    /// The console reads forms and cookies through Hummingbird, and sleeps on `SteadyTimer`.
    @Test func theConsoleParsesNoFormOrCookieByHandAndNeverSleepsOnTheTaskClock() throws {
        let files = try Self.sources(["Console"])
        let handWritten = ["Task.sleep", "split(separator: \"&\"", "split(separator: \";\"", "[.cookie]", "removingPercentEncoding", "FormFields"]
        for (path, text) in files {
            #expect(handWritten.filter { text.contains($0) }.isEmpty, "\(path): \(handWritten.filter { text.contains($0) })")
        }
    }
}
