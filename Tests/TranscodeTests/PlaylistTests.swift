import Testing
@testable import Transcode

@Suite struct PlaylistTests {
    let media = """
    #EXTM3U
    #EXT-X-VERSION:7
    #EXT-X-TARGETDURATION:6
    #EXT-X-PLAYLIST-TYPE:VOD
    #EXT-X-MAP:URI="init.mp4"
    #EXTINF:2.000000,
    seg_000.m4s
    #EXTINF:2.000000,
    seg_001.m4s
    #EXTINF:6.000000,
    seg_002.m4s
    #EXTINF:0.500000,
    seg_003.m4s
    #EXT-X-ENDLIST
    """

    @Test func parsesMediaPlaylist() throws {
        let playlist = try MediaPlaylist(parsing: media)
        #expect(playlist.targetDuration == 6)
        #expect(playlist.map == "init.mp4")
        #expect(playlist.segments.map(\.uri) == ["seg_000.m4s", "seg_001.m4s", "seg_002.m4s", "seg_003.m4s"])
        #expect(abs(playlist.duration - 10.5) < 1e-9)
    }

    @Test func bandwidthIsPeakAndAverageOfSegments() throws {
        let playlist = try MediaPlaylist(parsing: media)
        let bandwidth = RenditionBandwidth(playlist: playlist, sizes: [50_000, 25_000, 150_000, 10_000])
        #expect(bandwidth.peak == 200_000)       // 50 kB in 2 s
        #expect(bandwidth.average == 179_048)    // 235 kB over 10.5 s, rounded up
    }

    @Test func masterListsLowestFirstWithAllAttributes() {
        let text = MasterPlaylist.render([
            VariantStream(uri: "720p/index.m3u8", bandwidth: .init(peak: 3_000_000, average: 2_000_000), codecs: "avc1.64001f,mp4a.40.2", width: 720, height: 1280, frameRate: 30),
            VariantStream(uri: "360p/index.m3u8", bandwidth: .init(peak: 800_000, average: 500_000), codecs: "avc1.64001e,mp4a.40.2", width: 360, height: 640, frameRate: 30),
        ])
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines[0] == "#EXTM3U")
        #expect(lines.contains("#EXT-X-INDEPENDENT-SEGMENTS"))
        #expect(lines[3] == "#EXT-X-STREAM-INF:BANDWIDTH=800000,AVERAGE-BANDWIDTH=500000,CODECS=\"avc1.64001e,mp4a.40.2\",RESOLUTION=360x640,FRAME-RATE=30.000")
        #expect(lines[4] == "360p/index.m3u8")
        #expect(lines[6] == "720p/index.m3u8")
    }

    @Test func posterScorePrefersDetailOverBlack() {
        #expect(PosterPicker.score(yLow: 40, yHigh: 200, yAverage: 120) > PosterPicker.score(yLow: 16, yHigh: 60, yAverage: 20))
        #expect(PosterPicker.score(yLow: 230, yHigh: 235, yAverage: 233) < 12)
        #expect(PosterPicker.score(yLow: 16, yHigh: 18, yAverage: 16) < 12)
    }

    /// A detailed but dark frame loses to a later, flatter one five times brighter; a blown-out
    /// flash does not raise the bar; ties go to the earlier frame.
    @Test func posterIsNeverMuchDarkerThanTheBrightestCandidate() {
        func pick(_ stats: [(low: Double, high: Double, average: Double)]) -> Double? {
            var picker = PosterPicker()
            for (index, s) in stats.enumerated() {
                picker.add(.init(frame: Frame(), seconds: Double(index), brightness: s.average,
                                 score: PosterPicker.score(yLow: s.low, yHigh: s.high, yAverage: s.average)))
                #expect(picker.kept.count <= PosterPicker.capacity)
            }
            return picker.best?.seconds
        }
        #expect(pick([(16, 120, 40), (16, 110, 38), (60, 150, 200), (16, 100, 36)]) == 2)
        #expect(pick([(40, 200, 120), (250, 255, 252), (40, 201, 120)]) == 0)
        #expect(pick([(16, 20, 18), (16, 21, 19)]) == 0)
        // Many candidates, brightness rising: still a few frames held, the brightest chosen.
        let rising: [(low: Double, high: Double, average: Double)] = (0..<20).map { step in
            let i = Double(step)
            return (16, 60 + i * 8, 40 + i * 8)
        }
        #expect(pick(rising) == 19)
    }
}
