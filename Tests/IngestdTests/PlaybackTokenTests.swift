import Foundation
import Ingest
import Transcode
import IngestdTesting
@testable import Playback
import Testing

/// The signed playback URL's rule (no server needed): the binary's signer and the docs' Python
/// recipe sign the same URL; the key is named by its first four letters or digits; the expiry
/// is rounded up to a 10-minute window; a key file is checked as every secret file is.
struct PlaybackTokenTests {
    let line = "plsec_+/9Ab" + String(repeating: "x", count: 36)

    @Test func theSignerIsTheDocsRecipe() throws {
        let key = try PlaybackKey(line: line, path: "test")
        #expect(key.id == "9Abx", "letters and digits only: + and / are skipped")
        let place = PlaybackPlace(root: "/srv/cdn", id: "clip-1f2e3d4c5b6a7980")
        let url = PlaybackToken.url(base: "https://media.example.com/", place: place, expires: 1_800_000_600, key: key)
        let file = NSTemporaryDirectory() + "playback-\(UUID().uuidString).key"
        defer { try? FileManager.default.removeItem(atPath: file) }
        try Data((line + "\n").utf8).write(to: URL(fileURLWithPath: file))
        let recipe = try Tool.run("python3", ["\(Paths.root)/Tests/IngestdTesting/playback_url.py", "--expires", "1800000600",
                                              "https://media.example.com", place.id, file])
        #expect(url == recipe.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "\(url) vs \(recipe.stdout)")
        #expect(url.hasPrefix("https://media.example.com/clip-1f2e3d4c5b6a7980/p-9Abx-1800000600-") && url.hasSuffix("/master.m3u8"))
        // A bucket's version: the token right after the id, the version's path after it.
        let version = PlaybackPlace(root: "s3://media/cdn", id: "v1", version: "t3")
        #expect(PlaybackToken.url(base: "/", place: version, expires: 600, key: key).hasSuffix("/t3/master.m3u8"))
        #expect(PlaybackToken.expiry(now: Date(timeIntervalSince1970: 1_800_000_001), lifetime: 3600) == 1_800_004_200)
        #expect(PlaybackToken.expiry(now: Date(timeIntervalSince1970: 1_800_000_000), lifetime: 600) == 1_800_000_600)
    }

    @Test func aKeyFileIsCheckedAsEverySecret() throws {
        let file = NSTemporaryDirectory() + "playback-\(UUID().uuidString).key"
        defer { try? FileManager.default.removeItem(atPath: file) }
        _ = FileManager.default.createFile(atPath: file, contents: Data("plsec_\(Data(repeating: 7, count: 32).base64EncodedString())\n".utf8),
                                           attributes: [.posixPermissions: 0o644])
        #expect(throws: SecretFileError.self) { try PlaybackKey(path: file) }
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file)
        #expect(try PlaybackKey(path: file).id == "BwcH")
        try Data("whsec_\(Data(repeating: 7, count: 32).base64EncodedString())\n".utf8).write(to: URL(fileURLWithPath: file))
        #expect(throws: SecretFileError.self) { try PlaybackKey(path: file) }
    }

    @Test func anUploadAsksForItInItsManifest() throws {
        let directory = NSTemporaryDirectory() + "signed-upload-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.copyItem(atPath: Paths.sample("upload"), toPath: directory)
        let manifest = "\(directory)/upload.json"
        var json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: manifest))) as? [String: Any])
        #expect(Upload.declaredPlayback(of: .path(directory)) == nil)
        json["playback"] = "signed"
        try JSONSerialization.data(withJSONObject: json).write(to: URL(fileURLWithPath: manifest))
        #expect(Upload.declaredPlayback(of: .path(directory)) == .signed)
        _ = try Upload.open(directory, limits: Preset.builtIn.limits)
        json["playback"] = "private"
        try JSONSerialization.data(withJSONObject: json).write(to: URL(fileURLWithPath: manifest))
        #expect(Upload.declaredPlayback(of: .path(directory)) == nil)
        #expect(throws: (any Error).self) { try Upload.open(directory, limits: Preset.builtIn.limits) }
        #expect(PlaybackPolicy.strictest(.public, nil, .signed) == .signed && PlaybackPolicy.strictest(nil, .public) == .public)
    }
}
