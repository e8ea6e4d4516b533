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

    /// Every module, the media engine's inner loop (`Transcode/Engine`) aside.
    static let modules = ["Transcode", "Ingest", "Fleet", "Storage", "ObjectStorage", "Uploads", "Console", "Webhooks", "ingestd", "ingestd-fuzz"]

    @Test func noFileOutsideTheEngineIsOver250Lines() throws {
        let files = try Self.sources(Self.modules).filter { !$0.path.hasPrefix("Sources/Transcode/Engine/") }
        #expect(files.count > 200)
        let long = files.filter { $0.text.split(separator: "\n", omittingEmptySubsequences: false).count > 250 }.map(\.path)
        #expect(long.isEmpty, "\(long)")
    }

    /// docs/ARCHITECTURE.md's "The life of an upload" names each hop as `File.swift:function`:
    /// each file is there, once, and declares that function.
    @Test func theLifeOfAnUploadNamesFunctionsThatAreThere() throws {
        let doc = try String(contentsOfFile: "\(Paths.root)/docs/ARCHITECTURE.md", encoding: .utf8)
        let section = try #require(doc.components(separatedBy: "## The life of an upload").dropFirst().first)
        let hops = section.matches(of: /`([A-Za-z+]+\.swift):([A-Za-z]+)`/).map { (String($0.output.1), String($0.output.2)) }
        #expect(hops.count > 30)
        let files = try Self.sources(Self.modules)
        for (file, function) in hops {
            let found = files.filter { ($0.path as NSString).lastPathComponent == file }
            #expect(found.count == 1, "\(file): \(found.map(\.path))")
            #expect(found.contains { $0.text.contains("func \(function)(") || $0.text.contains("func \(function)<") },
                    "\(file) declares no \(function)")
        }
    }

    /// Calls go one way: the Jobs room knows nothing of the lifecycle, no store or producer knows
    /// the worker, and the kind of CDN is the output targets' alone.
    @Test func noRoomCallsBackIntoTheOneThatCalledIt() throws {
        let files = try Self.sources(Self.modules)
        func offenders(under prefixes: [String], naming names: [String]) -> [String] {
            files.filter { file in prefixes.contains { file.path.hasPrefix($0) } && names.contains { file.text.contains($0) } }.map(\.path)
        }
        #expect(offenders(under: ["Sources/Ingest/Jobs/"], naming: ["Margin", "JobWorker", "JobStore", "GrowingShow", "HostGate"]).isEmpty)
        #expect(offenders(under: ["Sources/Ingest/Spool/", "Sources/Fleet/", "Sources/Uploads/"], naming: ["JobWorker"]).isEmpty)
        let outside = files.filter { !$0.path.hasPrefix("Sources/Ingest/Output/") && !$0.path.hasPrefix("Sources/Storage/") }
        let kind = [".inBucket", "inBucket:", "remoteCDN", "isRemote(cdn", "isRemote(target", "isRemote(configuration.cdn"]
        #expect(outside.filter { file in kind.contains { file.text.contains($0) } }.map(\.path).isEmpty)
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
