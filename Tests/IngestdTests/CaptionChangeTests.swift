import IngestdTesting
import Foundation
import Testing
import Ingest
import Transcode

/// `ingestd captions` on a video the spool daemon published to a directory CDN: a track added
/// without encoding again (a new version of the master; what players hold unchanged), timed on
/// the video; a bad track refused; a track removed; the events recorded.
@Suite struct CaptionChangeTests {
    static func captions(_ spool: String, _ cdn: String, _ arguments: [String]) throws -> (status: Int32, answer: [String: Any], text: String) {
        let result = try Tool.run(Paths.binary, ["captions", "--spool", spool, "--cdn", cdn, "--json"] + arguments)
        let answer = (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]) ?? [:]
        return (result.status, answer, result.stdout + result.stderr)
    }

    @Test func aTrackIsAddedReplacedAndRemovedAfterPublish() async throws {
        let base = Paths.scratch("caption-change-\(UUID().uuidString.prefix(8))")
        let spool = "\(base)/spool", cdn = "\(base)/cdn"
        var daemon: Daemon? = try Daemon(spool: spool, cdn: cdn, extra: ["--jobs", "1"])
        try Daemon.drop(Paths.smallSample, into: spool, as: "clip.mp4")
        try Daemon.wait(timeout: 120, "published") { Daemon.events(spool).contains { $0["event"] as? String == "published" } }
        daemon = nil
        let id = try #require(Daemon.entries("\(spool)/archive").first)
        let video = "\(cdn)/\(id)"
        let before = try String(contentsOfFile: "\(video)/master.m3u8", encoding: .utf8)
        let version = try #require(VersionPointer.version(ofMaster: before))
        let held = try SignedPlaybackTests.digests(of: video)  // what a player that loaded the master may fetch

        try "WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nBonjour <i>tout</i> le monde\n".write(toFile: "\(base)/fr.vtt", atomically: true, encoding: .utf8)
        let added = try Self.captions(spool, cdn, [id, "add", "\(base)/fr.vtt", "--language", "fr", "--name", "Français"])
        #expect(added.status == 0 && added.answer["result"] as? String == "changed", "\(added.text)")
        let master = try String(contentsOfFile: "\(video)/master.m3u8", encoding: .utf8)
        let media = try #require(master.split(separator: "\n").first { $0.hasPrefix("#EXT-X-MEDIA:TYPE=SUBTITLES") }, "\(master)")
        #expect(media.contains(#"LANGUAGE="fr",NAME="Français""#) && media.contains("URI=\"\(version)/subs-fr."), "\(media)")
        #expect(master.split(separator: "\n").filter { $0.hasPrefix("#EXT-X-STREAM-INF:") }.allSatisfy { $0.hasSuffix(#"SUBTITLES="subs""#) })
        let now = try SignedPlaybackTests.digests(of: video)
        #expect(now.filter { held[$0.key] != nil } == held, "no file a player holds changed")
        let manifest = try JSONDecoder().decode(ReadyManifest.self, from: Data(contentsOf: URL(fileURLWithPath: "\(video)/manifest.json")))
        let caption = try #require(manifest.captions?.first)
        #expect(caption.language == "fr" && caption.source == "app" && caption.text == "Bonjour tout le monde" && caption.track.hasPrefix("\(version)/captions-fr."))
        // Timed on the video: through X-TIMESTAMP-MAP, less the video's first presentation time.
        let rung = try #require(manifest.renditions.first)
        let segments = try Checks.playlist("\(video)/\((rung.playlist as NSString).deletingLastPathComponent)").segments
        let joined = "\(base)/rung.mp4"
        let pieces = try ["init.mp4", segments[0].uri].map { try Data(contentsOf: URL(fileURLWithPath: "\(video)/\((rung.playlist as NSString).deletingLastPathComponent)/\($0)")) }
        try pieces.reduce(Data(), +).write(to: URL(fileURLWithPath: joined))
        let firstPTS = try #require(try Checks.frames(joined).map(\.time).min())
        let subtitles = "\(video)/\((caption.playlist as NSString).deletingLastPathComponent)"
        let cues = try Daemon.entries(subtitles).filter { $0.hasSuffix(".vtt") }
            .flatMap { try CaptionTests.cues(String(contentsOfFile: "\(subtitles)/\($0)", encoding: .utf8), firstPTS: firstPTS) }
        #expect(!cues.isEmpty && cues.allSatisfy { abs($0.start - 1) <= 0.040 && abs($0.end - 2) <= 0.040 }, "\(cues)")

        // Replaced: one French track, under new names (the old ones stay for players that hold them).
        try "WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nBonjour\n".write(toFile: "\(base)/fr2.vtt", atomically: true, encoding: .utf8)
        let replaced = try Self.captions(spool, cdn, [id, "add", "\(base)/fr2.vtt", "--language", "fr"])
        let second = try String(contentsOfFile: "\(video)/master.m3u8", encoding: .utf8).split(separator: "\n").filter { $0.hasPrefix("#EXT-X-MEDIA:") }
        #expect(replaced.status == 0 && second.count == 1 && second[0] != media && second[0].contains(#"NAME="French""#), "\(second)")
        #expect(FileManager.default.fileExists(atPath: subtitles), "the first track's files stay")

        try Data([0xFF, 0xFE, 0x00]).write(to: URL(fileURLWithPath: "\(base)/clip.bin"))
        let refused = try Self.captions(spool, cdn, [id, "add", "\(base)/clip.bin", "--language", "de"])
        #expect(refused.status == 65 && refused.text.contains("bad_captions"), "\(refused.text)")

        // A re-encode with another preset keeps the track the video plays (read from the version it replaces).
        let preset = "\(base)/other.json"
        try PresetFile.write(preset, name: "other", limits: ["maxClips": 19])
        let reprocessed = try Tool.run(Paths.binary, ["reprocess", "\(spool)/archive", "--cdn", cdn, "--preset", preset, "--json"])
        let kept = try String(contentsOfFile: "\(video)/master.m3u8", encoding: .utf8)
        #expect(reprocessed.status == 0 && VersionPointer.version(ofMaster: kept) != version, "\(reprocessed.stdout) \(reprocessed.stderr)")
        #expect(kept.contains(#"LANGUAGE="fr",NAME="French""#) && kept.contains("/subs-fr/index.m3u8"), "\(kept)")

        let removed = try Self.captions(spool, cdn, [id, "remove", "--language", "fr"])
        let after = try String(contentsOfFile: "\(video)/master.m3u8", encoding: .utf8)
        #expect(removed.status == 0 && !after.contains("SUBTITLES"), "\(removed.text) \(after)")
        let again = try Self.captions(spool, cdn, [id, "remove", "--language", "fr"])
        #expect(again.status == 1 && again.answer["result"] as? String == "no_track", "\(again.text)")
        let changes = Daemon.events(spool).filter { $0["event"] as? String == "captions_changed" }
        #expect(changes.count == 3 && (changes.first?["languages"] as? [String]) == ["fr"], "\(changes)")

        // Deleted, it never comes back through this door: refused (75), nothing written.
        let deleted = try Tool.run(Paths.binary, ["delete", "--spool", spool, "--cdn", cdn, "--reason-code", "owner", "--reason", "gone", id])
        let late = try Self.captions(spool, cdn, [id, "add", "\(base)/fr.vtt", "--language", "fr"])
        #expect(deleted.status == 0 && late.status == 75 && late.answer["result"] as? String == "not_published", "\(deleted.stdout) \(late.text)")
        #expect(!FileManager.default.fileExists(atPath: video), "nothing of the video in the CDN")
    }
}
