import Foundation
@testable import Ingest
import IngestdTesting
import Testing

/// The pointer rules of a video played while it is made, on real directories, without FFmpeg:
/// a stale attempt never takes the video back, a withdrawn version leaves no pointer, a pointer
/// naming a version whose files are gone is removed, and a planted link is never followed.
struct GrowingVersionTests {
    /// `CDN/<id>` with a version `t<token>` holding a master and a manifest.
    static func video(_ name: String, versions: [Int64]) throws -> String {
        let root = Paths.scratch("growing-version-\(name)/cdn/clip")
        try? FileManager.default.removeItem(atPath: Paths.scratch("growing-version-\(name)"))
        for token in versions {
            let version = "\(root)/t\(token)"
            try FileManager.default.createDirectory(atPath: "\(version)/360p", withIntermediateDirectories: true)
            try Data("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\n360p/index.m3u8\n".utf8).write(to: URL(fileURLWithPath: "\(version)/master.m3u8"))
        }
        return root
    }

    static func shown(_ root: String) -> String? {
        (try? String(contentsOfFile: "\(root)/master.m3u8", encoding: .utf8)).flatMap(VersionPointer.version(ofMaster:))
    }

    @Test func aStaleAttemptNeverTakesTheVideoBack() throws {
        let root = try Self.video("stale", versions: [1, 2])
        #expect(try GrowingVersion(root: root, token: 2).show())
        #expect(try !GrowingVersion(root: root, token: 1).show(), "t1 is older than the t2 shown")
        #expect(Self.shown(root) == "t2")
        #expect(throws: (any Error).self) { try GrowingVersion(root: root, token: 1).publish(staging: "\(root)/t1", adopted: false) }
        GrowingVersion(root: root, token: 1).discard()
        #expect(Self.shown(root) == "t2", "discarding t1 leaves t2's pointer")
        #expect(FileManager.default.fileExists(atPath: "\(root)/t2/master.m3u8") && !FileManager.default.fileExists(atPath: "\(root)/t1"))
    }

    @Test func aWithdrawnVersionLeavesNothingInView() throws {
        let root = try Self.video("withdrawn", versions: [3])
        #expect(try GrowingVersion(root: root, token: 3).show())
        #expect(try String(contentsOfFile: "\(root)/master.m3u8", encoding: .utf8).contains("t3/360p/index.m3u8"))
        GrowingVersion(root: root, token: 3).discard()
        #expect(!FileManager.default.fileExists(atPath: root), "no pointer, no version, no directory: \(Daemon.entries(root))")
    }

    @Test func aPointerToAVersionWhoseFilesAreGoneIsRemoved() throws {
        let root = try Self.video("gone", versions: [4])
        #expect(try GrowingVersion(root: root, token: 4).show())
        try FileManager.default.removeItem(atPath: "\(root)/t4")  // its daemon died between files and pointer
        GrowingVersion(root: root, token: 5).discardEarlier()
        #expect(!FileManager.default.fileExists(atPath: "\(root)/master.m3u8"))
    }

    @Test func aPublishedVideoStays() throws {
        let root = try Self.video("published", versions: [6])
        try JSONFile.write(["x": 1], to: "\(root)/t6/manifest.json")
        #expect(try GrowingVersion(root: root, token: 6).show())
        #expect(throws: (any Error).self, "not a manifest") { try GrowingVersion(root: root, token: 6).publish(staging: "\(root)/t6", adopted: false) }
        try Data("{}".utf8).write(to: URL(fileURLWithPath: "\(root)/manifest.json"))  // as if published
        GrowingVersion(root: root, token: 7).discardEarlier()
        #expect(Self.shown(root) == "t6" && FileManager.default.fileExists(atPath: "\(root)/t6"), "the published version stays")
        #expect(try !GrowingVersion(root: root, token: 7).show(), "a published video is not shown again")
    }

    /// A job process may write in `CDN/<id>`: a master that is a link to a file elsewhere is not
    /// published, and a link planted where the pointer's temporary file goes is not followed.
    @Test func plantedLinksAreNeverFollowed() throws {
        let root = try Self.video("links", versions: [8])
        let secret = Paths.scratch("growing-version-links/secret.txt")
        try Data("secret\n".utf8).write(to: URL(fileURLWithPath: secret))
        try FileManager.default.removeItem(atPath: "\(root)/t8/master.m3u8")
        try FileManager.default.createSymbolicLink(atPath: "\(root)/t8/master.m3u8", withDestinationPath: secret)
        #expect(throws: (any Error).self) { try GrowingVersion(root: root, token: 8).show() }
        #expect(!FileManager.default.fileExists(atPath: "\(root)/master.m3u8"))
        try FileManager.default.removeItem(atPath: "\(root)/t8/master.m3u8")
        try Data("#EXTM3U\n360p/index.m3u8\n".utf8).write(to: URL(fileURLWithPath: "\(root)/t8/master.m3u8"))
        try FileManager.default.createSymbolicLink(atPath: "\(root)/.master.m3u8.partial", withDestinationPath: secret)
        #expect(try GrowingVersion(root: root, token: 8).show())
        #expect(try String(contentsOfFile: secret, encoding: .utf8) == "secret\n", "the link's target is untouched")
    }
}
