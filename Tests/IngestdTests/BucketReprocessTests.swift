import Foundation
import IngestdTesting
import Testing
import Transcode

/// `reprocess --cdn s3://…` (#30): each video under a new version prefix, its `current.json`
/// switched with `If-Match`; a real SeaweedFS server, the real binary, boto3 reading back.
@Suite(.serialized, .enabled(if: ObjectStoreServer.binary != nil && S3Check.available, "SeaweedFS or boto3 is not installed"))
struct BucketReprocessTests {
    /// An archive of `videos` (name → sample).
    static func archive(_ name: String, _ videos: [String: String]) throws -> String {
        let archive = Paths.scratch("bucket-reprocess-\(name)")
        try? FileManager.default.removeItem(atPath: archive)
        try FileManager.default.createDirectory(atPath: archive, withIntermediateDirectories: true)
        for (file, sample) in videos { try FileManager.default.copyItem(atPath: Paths.sample(sample), toPath: "\(archive)/\(file)") }
        return archive
    }

    /// A preset other than the built-in one (another hash).
    static func v2() throws -> String {
        var changed = Preset.builtIn
        changed.name = "v2"
        changed.rungs[0].crf = 30
        let path = Paths.scratch("bucket-reprocess-v2.json")
        try changed.canonicalJSON().write(to: URL(fileURLWithPath: path))
        return path
    }

    static func arguments(_ archive: String, endpoint: String, _ extra: [String]) -> [String] {
        ["reprocess", archive, "--cdn", "s3://media/cdn", "--json", "--s3-endpoint", endpoint] + extra
    }

    /// Runs reprocess to its end: exit status and `{id: item}` of its JSON report.
    static func reprocess(_ server: ObjectStoreServer, _ archive: String, _ extra: [String] = [],
                          endpoint: String? = nil) throws -> (status: Int32, items: [String: [String: Any]]) {
        let result = try Tool.run(Paths.binary, arguments(archive, endpoint: endpoint ?? server.endpoint, extra), environment: server.environment)
        return (result.status, items(result.stdout))
    }

    static func items(_ report: String) -> [String: [String: Any]] {
        let json = (try? JSONSerialization.jsonObject(with: Data(report.utf8)) as? [String: Any]) ?? [:]
        return Dictionary(uniqueKeysWithValues: json.list("items").map { ($0.string("id") ?? "", $0) })
    }

    /// `cdn/<id>/current.json` as boto3 reads it: its bytes, its JSON and its ETag.
    static func pointer(_ server: ObjectStoreServer, _ id: String) throws -> (data: Data, version: String, etag: String) {
        let file = Paths.scratch("bucket-reprocess-pointer-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(atPath: file) }
        _ = try S3Check.run(server, ["get", server.bucket, "cdn/\(id)/current.json", file])
        let data = try Data(contentsOf: URL(fileURLWithPath: file))
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let version = try #require(json.string("version"))
        #expect(json.string("master") == "s3://media/cdn/\(id)/\(version)/master.m3u8")
        let head = try #require(try S3Check.run(server, ["head", server.bucket, "cdn/\(id)/current.json"]) as? [String: Any])
        return (data, version, try #require(head.string("etag")))
    }

    static func keys(_ server: ObjectStoreServer, _ prefix: String) throws -> [String] {
        try #require(try S3Check.run(server, ["list", server.bucket, prefix]) as? [String])
    }

    /// The version is complete: its manifest, and every playlist its master names.
    static func expectComplete(_ server: ObjectStoreServer, _ id: String, _ version: String) throws {
        let keys = try keys(server, "cdn/\(id)/\(version)/")
        #expect(keys.contains("cdn/\(id)/\(version)/manifest.json"), "\(id)/\(version): \(keys)")
        let master = Paths.scratch("bucket-reprocess-master-\(UUID().uuidString).m3u8")
        defer { try? FileManager.default.removeItem(atPath: master) }
        _ = try S3Check.run(server, ["get", server.bucket, "cdn/\(id)/\(version)/master.m3u8", master])
        let uris = try String(contentsOfFile: master, encoding: .utf8).split(separator: "\n").filter { !$0.hasPrefix("#") }
        #expect(!uris.isEmpty)
        for uri in uris { #expect(keys.contains("cdn/\(id)/\(version)/\(uri)"), "\(id)/\(version): \(uri) missing") }
    }

    @Test func eachPointerIsSwitchedToANewPrefixTheOldOneKeptAndARerunSwitchesNothing() throws {
        let server = try ObjectStoreServer(name: "reprocess")
        let archive = try Self.archive("switch", ["a.mp4": "hdr_hlg.mp4", "b.webm": "noaudio_odd.webm"])
        let first = try Self.reprocess(server, archive)
        #expect(first.status == 0 && first.items.count == 2 && first.items.values.allSatisfy { $0.string("result") == "published" }, "\(first)")
        let before = try Dictionary(uniqueKeysWithValues: first.items.keys.map { ($0, try Self.pointer(server, $0)) })
        let oldKeys = try Dictionary(uniqueKeysWithValues: before.map { ($0.key, try Self.keys(server, "cdn/\($0.key)/\($0.value.version)/")) })

        let preset = try Self.v2()
        let second = try Self.reprocess(server, archive, ["--preset", preset, "--jobs", "2"])
        #expect(second.status == 0 && second.items.values.allSatisfy { $0.string("result") == "published" }, "\(second)")
        var after: [String: (data: Data, version: String, etag: String)] = [:]
        for (id, old) in before {
            let new = try Self.pointer(server, id)
            after[id] = new
            #expect(new.version != old.version && new.version.hasPrefix("v"), "\(id): \(old.version) → \(new.version)")
            #expect(second.items[id]?.string("version") == "s3://media/cdn/\(id)/\(new.version)")
            try Self.expectComplete(server, id, new.version)
            #expect(try Self.keys(server, "cdn/\(id)/\(old.version)/") == oldKeys[id], "\(id): the old version is intact")
        }

        let everything = try Self.keys(server, "cdn/")
        let third = try Self.reprocess(server, archive, ["--preset", preset])
        #expect(third.status == 0 && third.items.values.allSatisfy { $0.string("result") == "skipped" }, "\(third)")
        for (id, new) in after { #expect(try Self.pointer(server, id).etag == new.etag, "\(id): not switched again") }
        #expect(try Self.keys(server, "cdn/") == everything, "nothing uploaded")
    }

    /// The test rewrites `current.json` while reprocess's `If-Match` write is held in a proxy:
    /// the write fails with 412, the test's pointer stays, and the next run switches from it.
    @Test func aPointerChangedBehindReprocesssBackIsNotClobbered() throws {
        let server = try ObjectStoreServer(name: "reprocess-race")
        let archive = try Self.archive("race", ["a.mp4": "hdr_hlg.mp4"])
        let first = try Self.reprocess(server, archive)
        let id = try #require(first.items.keys.first)
        let old = try Self.pointer(server, id)

        let proxy = try HTTPFaultProxy(target: server.port)
        let write = "PUT /media/cdn/\(id)/current.json"
        // Held until the other writer's pointer has landed: a loaded host's slow boto3 cannot miss a window.
        let release = Paths.scratch("bucket-reprocess-release")
        try? FileManager.default.removeItem(atPath: release)
        try proxy.hold(matching: write, until: release)
        let report = Paths.scratch("bucket-reprocess-race.json")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Paths.binary)
        process.arguments = Self.arguments(archive, endpoint: "http://127.0.0.1:\(proxy.port)", ["--preset", try Self.v2()])
        process.environment = ProcessInfo.processInfo.environment.merging(server.environment) { $1 }
        _ = FileManager.default.createFile(atPath: report, contents: nil)
        process.standardOutput = FileHandle(forWritingAtPath: report)
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        try Daemon.wait(timeout: 180, "reprocess's pointer write") { proxy.arrived.contains(write) }
        // Another writer's pointer (the old version, published again) lands first.
        let theirs = Paths.scratch("bucket-reprocess-theirs.json")
        let text = #"{"master":"s3://media/cdn/\#(id)/\#(old.version)/master.m3u8","published_at":"2030-01-01T00:00:00Z","version":"\#(old.version)"}"#
        try Data(text.utf8).write(to: URL(fileURLWithPath: theirs))
        _ = try S3Check.run(server, ["put", server.bucket, "cdn/\(id)/current.json", theirs])
        _ = FileManager.default.createFile(atPath: release, contents: nil)
        process.waitUntilExit()

        let item = try #require(Self.items(try String(contentsOfFile: report, encoding: .utf8))[id])
        #expect(process.terminationStatus == 1 && item.string("result") == "failed", "\(item)")
        #expect(item.string("error")?.contains("pointer_moved") == true, "\(item)")
        #expect(proxy.requests.contains("\(write) 412"), "\(proxy.requests)")
        #expect(try Self.pointer(server, id).data == Data(text.utf8), "the other writer's pointer stands")
        // Nothing was lost: the next run reprocesses the video and switches from that pointer.
        let again = try Self.reprocess(server, archive, ["--preset", try Self.v2()])
        #expect(again.status == 0 && again.items[id]?.string("result") == "published", "\(again)")
        let now = try Self.pointer(server, id)
        #expect(now.version != old.version)
        try Self.expectComplete(server, id, now.version)
    }

    /// kill -9 mid-batch, then a rerun: every pointer written exactly once (counted in the
    /// proxy's log of both runs), each naming a complete version.
    @Test func killNineMidReprocessThenRerunSwitchesEachPointerOnce() throws {
        let server = try ObjectStoreServer(name: "reprocess-kill")
        let archive = try Self.archive("kill", ["a0.mp4": "hdr_hlg.mp4", "a1.mp4": "hdr_hlg.mp4", "a2.mp4": "hdr_hlg.mp4",
                                                "a3.mp4": "hdr_hlg.mp4"])
        let proxy = try HTTPFaultProxy(target: server.port)
        let endpoint = "http://127.0.0.1:\(proxy.port)"
        func pointerWrites() -> [String] { proxy.requests.filter { $0.hasPrefix("PUT /media/cdn/") && $0.contains("/current.json ") } }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Paths.binary)
        process.arguments = Self.arguments(archive, endpoint: endpoint, [])
        process.environment = ProcessInfo.processInfo.environment.merging(server.environment) { $1 }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        try Daemon.wait(timeout: 180, "the first pointer") { !pointerWrites().isEmpty }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()

        let resumed = try Self.reprocess(server, archive, endpoint: endpoint)
        #expect(resumed.status == 0 && resumed.items.count == 4, "\(resumed)")
        let results = resumed.items.values.compactMap { $0.string("result") }
        #expect(results.contains("skipped") && results.contains("published"), "work done before the kill is not redone: \(results)")
        let writes = pointerWrites()
        for id in resumed.items.keys {
            let mine = writes.filter { $0.hasPrefix("PUT /media/cdn/\(id)/current.json ") }
            #expect(mine == ["PUT /media/cdn/\(id)/current.json 200"], "\(id): \(mine)")
            try Self.expectComplete(server, id, try Self.pointer(server, id).version)
        }
    }
}
