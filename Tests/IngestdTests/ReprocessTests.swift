import IngestdTesting
import Foundation
import Testing
import Transcode

/// `ingestd reprocess`: batch re-encode, skip, resume after kill -9, safe swap for live readers.
@Suite(.serialized) struct ReprocessTests {
    struct Batch {
        let archive: String
        let cdn: String
    }

    func freshBatch(_ name: String, broken: Bool = true, upload: Bool = false) throws -> Batch {
        let base = Paths.scratch("reprocess-\(name)")
        try? FileManager.default.removeItem(atPath: base)
        let archive = "\(base)/archive", cdn = "\(base)/cdn"
        try FileManager.default.createDirectory(atPath: "\(archive)/nested", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: cdn, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Paths.sample("hdr_hlg.mp4"), toPath: "\(archive)/hdr.mp4")
        try FileManager.default.copyItem(atPath: Paths.sample("noaudio_odd.webm"), toPath: "\(archive)/nested/odd clip.webm")
        // A daemon archive entry: its id comes from the directory, its original is alone in upload/.
        try FileManager.default.createDirectory(atPath: "\(archive)/landscape-0badc0de/upload", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Paths.sample("landscape_60fps.mp4"), toPath: "\(archive)/landscape-0badc0de/upload/l.mp4")
        try #"{"id":"landscape-0badc0de","original":"l.mp4","receivedAt":"2026-01-01T00:00:00Z","attempts":0}"#
            .write(toFile: "\(archive)/landscape-0badc0de/job.json", atomically: true, encoding: .utf8)
        if broken { try FileManager.default.copyItem(atPath: Paths.sample("broken_truncated.mp4"), toPath: "\(archive)/broken.mp4") }
        // An upload directory in the tree: one upload (its clips are not separate videos).
        if upload {
            try FileManager.default.createDirectory(atPath: "\(archive)/trips", withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: Paths.sample("upload"), toPath: "\(archive)/trips/beach")
        }
        return Batch(archive: archive, cdn: cdn)
    }

    func reprocess(_ batch: Batch, _ extra: [String] = []) throws -> (status: Int32, report: [String: Any]) {
        let result = try Tool.run(Paths.binary, ["reprocess", batch.archive, "--cdn", batch.cdn, "--json"] + extra)
        let report = (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]) ?? [:]
        return (result.status, report)
    }

    func results(_ report: [String: Any]) -> [String: String] {
        Dictionary(uniqueKeysWithValues: report.list("items").map { ($0.string("id") ?? "", $0.string("result") ?? $0.string("action") ?? "") })
    }

    @Test func batchPublishesGoodVideosReportsBadOnesAndSkipsOnRerun() throws {
        let batch = try freshBatch("batch", upload: true)
        let first = try reprocess(batch)
        #expect(first.status == 1, "a failed video makes the exit status 1")
        let outcome = results(first.report)
        #expect(outcome.count == 5, "\(outcome)")
        #expect(outcome.filter { $0.value == "published" }.count == 4)
        let merged = try #require(outcome.keys.first { $0.hasPrefix("trips_beach-") })
        let mergedManifest = try JSONDecoder().decode(ReadyManifest.self, from: Data(contentsOf: URL(fileURLWithPath: "\(batch.cdn)/\(merged)/manifest.json")))
        #expect(mergedManifest.sources.count == 3 && mergedManifest.uploadID == "sample-upload-1")
        #expect(outcome.first { $0.key.hasPrefix("broken") }?.value == "failed")
        #expect(outcome["landscape-0badc0de"] == "published")
        #expect(outcome.keys.contains { $0.hasPrefix("nested_odd_clip-") })
        #expect(!FileManager.default.fileExists(atPath: "\(batch.cdn)/\(outcome.keys.first { $0.hasPrefix("broken") }!)"),
                "nothing in the CDN for a failed video")
        // Each published master plays to the end.
        for (id, result) in outcome where result == "published" {
            let json = try Tool.ffprobe(["-count_frames", "-show_entries", "stream=codec_type,nb_read_frames", "-select_streams", "v:0",
                                         "\(batch.cdn)/\(id)/master.m3u8"])
            #expect((json.list("streams").first?.int("nb_read_frames") ?? 0) > 0)
            let manifest = try JSONDecoder().decode(ReadyManifest.self, from: Data(contentsOf: URL(fileURLWithPath: "\(batch.cdn)/\(id)/manifest.json")))
            #expect(manifest.preset.hash == Preset.builtIn.contentHash)
            #expect(FileManager.default.fileExists(atPath: "\(batch.cdn)/\(id)/\(manifest.mp4)"))
        }
        let second = try reprocess(batch)
        let again = results(second.report)
        #expect(again.filter { $0.value == "skipped" }.count == 4, "\(again)")
        let dry = try Tool.run(Paths.binary, ["reprocess", batch.archive, "--cdn", batch.cdn, "--dry-run"])
        #expect(dry.status == 0)
        #expect(dry.stdout.contains("already published with preset \(Preset.builtIn.contentHash)"))
    }

    @Test func presetChangeReencodesWhileOldReadersKeepWorking() throws {
        let batch = try freshBatch("swap", broken: false)
        #expect(try reprocess(batch).status == 0)
        let id = "landscape-0badc0de"
        let oldMaster = try String(contentsOfFile: "\(batch.cdn)/\(id)/master.m3u8", encoding: .utf8)
        let oldURIs = oldMaster.split(separator: "\n").filter { !$0.hasPrefix("#") }.map(String.init)
        var changed = Preset.builtIn
        changed.name = "v2"
        changed.rungs[0].crf = 30
        let presetPath = Paths.scratch("reprocess-v2.json")
        try changed.canonicalJSON().write(to: URL(fileURLWithPath: presetPath))
        let run = try reprocess(batch, ["--preset", presetPath, "--jobs", "2"])
        #expect(run.status == 0)
        #expect(results(run.report).values.allSatisfy { $0 == "published" }, "everything re-encoded")
        let newMaster = try String(contentsOfFile: "\(batch.cdn)/\(id)/master.m3u8", encoding: .utf8)
        #expect(newMaster != oldMaster)
        #expect(newMaster.contains("v\(changed.contentHash)/"))
        // I-frame playlists (URI="…" attributes) are moved into the version directory too.
        let attributeURIs = newMaster.components(separatedBy: "URI=\"").dropFirst().map { String($0.prefix { $0 != "\"" }) }
        #expect(!attributeURIs.isEmpty)
        for uri in attributeURIs {
            #expect(uri.hasPrefix("v\(changed.contentHash)/") && FileManager.default.fileExists(atPath: "\(batch.cdn)/\(id)/\(uri)"), "\(uri)")
        }
        // A reader holding the old master still finds every playlist and segment it refers to.
        for uri in oldURIs {
            let playlist = "\(batch.cdn)/\(id)/\(uri)"
            let frames = try Tool.ffprobe(["-count_frames", "-show_entries", "stream=nb_read_frames", "-select_streams", "v:0", playlist])
            #expect((frames.list("streams").first?.int("nb_read_frames") ?? 0) == 150, "old rendition \(uri) still plays")
        }
        // Once the grace period is over, the next run removes the old version.
        _ = try reprocess(batch, ["--preset", presetPath, "--grace", "0"])
        let oldVersion = try #require(oldURIs.first?.split(separator: "/").first.map(String.init))
        #expect(!FileManager.default.fileExists(atPath: "\(batch.cdn)/\(id)/\(oldVersion)"))
        #expect(FileManager.default.fileExists(atPath: "\(batch.cdn)/\(id)/v\(changed.contentHash)"))
    }

    @Test func killNineMidBatchThenRerunFinishesWithNothingHalfPublished() throws {
        let batch = try freshBatch("kill", broken: false)
        for index in 0..<3 {
            try FileManager.default.copyItem(atPath: Paths.smallSample, toPath: "\(batch.archive)/p\(index).mp4")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Paths.binary)
        process.arguments = ["reprocess", batch.archive, "--cdn", batch.cdn, "--json"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // manifest.json is switched last: once it is there, that video is completely published.
        // (Killed between its master.m3u8 and manifest.json, a rerun switches the finished version
        // without re-encoding and reports it "published", not "skipped".)
        // It runs in the test's steps until then, and is killed stopped: the batch is mid-way
        // however fast its jobs are.
        try Daemon.step(process.processIdentifier, timeout: 120, "the first video to be published") {
            Daemon.entries(batch.cdn).contains { FileManager.default.fileExists(atPath: "\(batch.cdn)/\($0)/manifest.json") }
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        // Whatever is visible is complete: a master.m3u8 always points at a complete version, and
        // the video published before the kill has one.
        var masters = 0
        for id in Daemon.entries(batch.cdn) {
            let hasManifest = FileManager.default.fileExists(atPath: "\(batch.cdn)/\(id)/manifest.json")
            guard let master = try? String(contentsOfFile: "\(batch.cdn)/\(id)/master.m3u8", encoding: .utf8) else {
                #expect(!hasManifest, "\(id): manifest.json without master.m3u8")
                continue
            }
            masters += 1
            let uris = master.split(separator: "\n").filter { !$0.hasPrefix("#") }
            #expect(!uris.isEmpty, "\(id): a master with no renditions")
            for uri in uris {
                #expect(FileManager.default.fileExists(atPath: "\(batch.cdn)/\(id)/\(uri)"))
            }
        }
        #expect(masters >= 1, "the video published before the kill is visible")
        let resumed = try reprocess(batch)
        #expect(resumed.status == 0)
        let outcome = results(resumed.report)
        #expect(outcome.count == 6)
        #expect(outcome.values.contains("skipped"), "work done before the kill is not redone")
        #expect(outcome.values.allSatisfy { $0 == "skipped" || $0 == "published" })
        for id in outcome.keys {
            #expect(FileManager.default.fileExists(atPath: "\(batch.cdn)/\(id)/master.m3u8"))
            let hidden = Daemon.entries("\(batch.cdn)/\(id)").filter { $0.contains(".staging-") }
            #expect(hidden.isEmpty, "staging left in \(id): \(hidden)")
        }
    }
}
