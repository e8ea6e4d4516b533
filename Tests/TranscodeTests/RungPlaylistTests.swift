import Testing
@testable import Transcode

/// The growing playlist's rules, without FFmpeg: versions only append, the target duration is
/// fixed, the end only adds `EXT-X-ENDLIST`.
struct EventPlaylistTests {
    @Test func everyVersionIsThePreviousPlusEntries() {
        var playlist = EventPlaylist(targetDuration: 1, initURI: "init.mp4")
        var versions: [String] = [playlist.text]
        for (index, seconds) in [0.5, 0.5, 1.0, 1.0, 0.7].enumerated() {
            let appended = playlist.append(.init(uri: String(format: "seg_%03d.m4s", index), seconds: seconds))
            #expect(appended)
            versions.append(playlist.text)
        }
        playlist.end()
        versions.append(playlist.text)
        for (older, newer) in zip(versions, versions.dropFirst()) {
            #expect(newer.hasPrefix(older), "a version only appends")
        }
        #expect(versions.last!.hasSuffix("seg_004.m4s\n#EXT-X-ENDLIST\n"))
        #expect(versions[0].contains("#EXT-X-PLAYLIST-TYPE:EVENT") && versions[0].contains("#EXT-X-START:TIME-OFFSET=0")
                && versions[0].contains("#EXT-X-TARGETDURATION:1") && versions[0].contains("#EXT-X-MEDIA-SEQUENCE:0"))
    }

    @Test func aSegmentPastTheTargetOrAfterTheEndIsRefused() {
        var playlist = EventPlaylist(targetDuration: 1, initURI: "init.mp4")
        let long = playlist.append(.init(uri: "long.m4s", seconds: 1.6))
        let ok = playlist.append(.init(uri: "ok.m4s", seconds: 1.4))
        playlist.end()
        let late = playlist.append(.init(uri: "late.m4s", seconds: 0.5))
        #expect(!long && ok && !late)
        #expect(playlist.segments.map(\.uri) == ["ok.m4s"])
    }
}
