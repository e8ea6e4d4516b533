import Testing
@testable import Transcode

/// The growing playlist's rules, without FFmpeg: versions only append, the target duration is
/// fixed, the end only adds `EXT-X-ENDLIST`.
struct RungPlaylistTests {
    @Test func everyVersionIsThePreviousPlusEntries() {
        var playlist = RungPlaylist(kind: .event, targetDuration: 1, initURI: "init.mp4")
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
        var playlist = RungPlaylist(kind: .event, targetDuration: 1, initURI: "init.mp4")
        let long = playlist.append(.init(uri: "long.m4s", seconds: 1.6))
        let ok = playlist.append(.init(uri: "ok.m4s", seconds: 1.4))
        playlist.end()
        let late = playlist.append(.init(uri: "late.m4s", seconds: 0.5))
        #expect(!long && ok && !late)
        #expect(playlist.segments.map(\.uri) == ["ok.m4s"])
    }
}

/// When a growing ladder becomes playable, as a rule: two target durations listed, more when the
/// encode is slower than real time, never more than the video.
struct PlayableGateTests {
    @Test func twoTargetDurationsWhenTheEncodeKeepsUp() {
        #expect(PlayableGate.secondsNeeded(targetDuration: 1, totalSeconds: 60, speed: 3) == 2)
        #expect(PlayableGate.secondsNeeded(targetDuration: 1, totalSeconds: 60, speed: 1) == 2)
        #expect(PlayableGate.secondsNeeded(targetDuration: 1, totalSeconds: 1.5, speed: 3) == 1.5, "a short video: all of it")
    }

    @Test func moreWhenTheEncodeIsSlowerThanPlayback() {
        // D − r·(D − 2·TD) = 20 − 0.5 × 18: the encoder, at 0.5×, lists the rest no later
        // than a player at 1× that starts now could reach it (with its 2 s margin).
        #expect(abs(PlayableGate.secondsNeeded(targetDuration: 1, totalSeconds: 20, speed: 0.5) - 11) < 1e-9)
        #expect(PlayableGate.secondsNeeded(targetDuration: 1, totalSeconds: 20, speed: 0) == 20, "no progress yet: all of it")
    }

    /// The speed the gate trusts is the recent one: a job starved while others ran (1 s listed in
    /// its first 10 s) that now lists a second per second is judged at that 1× (counted at 0.9),
    /// not at its average.
    @Test func theSpeedIsTheLastWindowsNotTheWholeRunsAverage() {
        var history: [(elapsed: Double, least: Double)] = []
        #expect(PlayableGate.countedPace(&history, least: 1, elapsed: 2, window: 5) == 0.5, "shorter than the window: the whole run")
        _ = PlayableGate.countedPace(&history, least: 1, elapsed: 10, window: 5)
        for second in 11...16 { _ = PlayableGate.countedPace(&history, least: Double(second - 9), elapsed: Double(second), window: 5) }
        #expect(PlayableGate.countedPace(&history, least: 7, elapsed: 16, window: 5) == PlayableGate.paceTrust, "the last 5 s: 5 s listed, counted at 0.9")
        #expect(history.count <= 7, "trimmed to the window: \(history.count)")
        #expect(PlayableGate.countedPace(&history, least: 7, elapsed: 22, window: 5) < 0.5, "stalled since: slow again")
        #expect(PlayableGate.countedPace(&history, least: .infinity, elapsed: 23, window: 5) == .infinity, "every rung ended")
    }

    /// The seconds before the first listing are the pipeline filling, not the pace: a ladder
    /// that lists its first half second after 2 s, then a second per second, runs at 1×.
    @Test func thePaceCountsFromTheFirstListing() {
        var history: [(elapsed: Double, least: Double)] = []
        #expect(PlayableGate.countedPace(&history, least: 0, elapsed: 1.5, window: 5) == 0)
        #expect(PlayableGate.countedPace(&history, least: 0.5, elapsed: 2, window: 5) == 0.25, "one listing: the whole run's average")
        #expect(PlayableGate.countedPace(&history, least: 1, elapsed: 2.5, window: 5) == 0.4, "listed for less than a second: still the average, as it is")
        let pace = PlayableGate.countedPace(&history, least: 2, elapsed: 3.5, window: 5)
        #expect(pace == PlayableGate.paceTrust, "from the first listing on: 1.5 s in 1.5 s, counted at 0.9")
        let needed = PlayableGate.secondsNeeded(targetDuration: 1, totalSeconds: 20, speed: pace)
        #expect(abs(needed - 3.8) < 1e-9, "shown with 3.8 s of 20 listed (the run's average, 0.57×, would ask 9.7): \(needed)")
    }

    /// A ladder that lists its first 2 s within a second of its first listing, at 1× on average
    /// (the filling included), shows with 2 s listed: the average is not discounted again.
    @Test func aFastLaddersAverageCountsAsItIs() {
        var history: [(elapsed: Double, least: Double)] = []
        _ = PlayableGate.countedPace(&history, least: 1, elapsed: 1.4, window: 5)
        let pace = PlayableGate.countedPace(&history, least: 2, elapsed: 2, window: 5)
        #expect(pace == 1)
        #expect(PlayableGate.secondsNeeded(targetDuration: 1, totalSeconds: 60, speed: pace) == 2)
    }

    @Test func theGateOpensOnceWhenEveryRungListsEnough() throws {
        let gate = PlayableGate(rungs: 2, targetDuration: 1, totalSeconds: 3)
        var opened: [Double] = []
        gate.open = { opened.append($0) }
        try gate.rung(0, lists: 3, ended: true)
        #expect(opened.isEmpty, "the other rung lists nothing yet")
        try gate.rung(1, lists: 3, ended: true)
        try gate.rung(1, lists: 3, ended: true)
        #expect(opened == [3])
    }
}

struct RungPlaylistVODTests {
    @Test func aVideoPublishedWholeGetsOneVODVersion() {
        var playlist = RungPlaylist(kind: .vod, targetDuration: 1, initURI: "init.mp4")
        playlist.append(.init(uri: "seg_000.m4s", seconds: 0.5))
        playlist.end()
        #expect(playlist.text.contains("#EXT-X-PLAYLIST-TYPE:VOD") && !playlist.text.contains("#EXT-X-START")
                && playlist.text.hasSuffix("seg_000.m4s\n#EXT-X-ENDLIST\n"))
    }
}
