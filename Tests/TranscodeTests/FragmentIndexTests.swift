import Testing
@testable import Transcode

/// The fMP4 box reader behind I-frame playlists, on hand-built boxes.
@Suite struct FragmentIndexTests {
    func box(_ type: String, _ payload: [UInt8]) -> [UInt8] {
        be32(8 + payload.count) + Array(type.utf8) + payload
    }

    func be32(_ value: Int) -> [UInt8] { (0..<4).reversed().map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) } }

    func track(id: Int, handler: String) -> [UInt8] {
        let tkhd = box("tkhd", [0, 0, 0, 3] + be32(0) + be32(0) + be32(id) + Array(repeating: 0, count: 68))
        let hdlr = box("hdlr", [0, 0, 0, 0] + be32(0) + Array(handler.utf8) + Array(repeating: 0, count: 13))
        return box("trak", tkhd + box("mdia", box("mdhd", Array(repeating: 0, count: 24)) + hdlr))
    }

    /// A traf with default-base-is-moof (or not), a trun with a data offset and explicit sample sizes.
    func traf(id: Int, baseIsMoof: Bool, dataOffset: Int, sizes: [Int]) -> [UInt8] {
        let tfhd = box("tfhd", [0, baseIsMoof ? 2 : 0, 0, 0] + be32(id))
        let trun = box("trun", [0, 0, 0x02, 0x01] + be32(sizes.count) + be32(dataOffset) + sizes.flatMap(be32))
        return box("traf", tfhd + trun)
    }

    @Test func findsTheVideoTrackInTheInitSegment() {
        let initSegment = box("ftyp", Array("iso5".utf8) + be32(0)) + box("moov", box("mvhd", Array(repeating: 0, count: 100))
            + track(id: 2, handler: "soun") + track(id: 7, handler: "vide"))
        #expect(FragmentIndex.videoTrackID(initSegment: initSegment) == 7)
        #expect(FragmentIndex.videoTrackID(initSegment: box("moov", track(id: 2, handler: "soun"))) == nil)
    }

    @Test func rangeRunsFromMoofToTheEndOfTheFirstVideoSample() {
        // styp, then moof holding audio (track 2) before video (track 7), then mdat: audio samples, video samples.
        let prefix = box("styp", Array("msdh".utf8) + be32(0))
        func segment(baseIsMoof: Bool) -> [UInt8] {
            let probe = box("moof", box("mfhd", be32(0) + be32(1)) + traf(id: 2, baseIsMoof: baseIsMoof, dataOffset: 0, sizes: [10, 20])
                + traf(id: 7, baseIsMoof: baseIsMoof, dataOffset: 0, sizes: [500, 60]))
            let audioAt = probe.count + 8
            let videoAt = baseIsMoof ? audioAt + 30 : 0  // without the flag, the second traf continues after the first's data
            let moof = box("moof", box("mfhd", be32(0) + be32(1)) + traf(id: 2, baseIsMoof: baseIsMoof, dataOffset: audioAt, sizes: [10, 20])
                + traf(id: 7, baseIsMoof: baseIsMoof, dataOffset: videoAt, sizes: [500, 60]))
            return prefix + moof + box("mdat", Array(repeating: 0xAB, count: 590))
        }
        for baseIsMoof in [true, false] {
            let data = segment(baseIsMoof: baseIsMoof)
            let moofStart = prefix.count
            let moofSize = data.count - prefix.count - 598
            let range = FragmentIndex.firstSampleRange(segment: data, trackID: 7)
            #expect(range == moofStart..<(moofStart + moofSize + 8 + 30 + 500), "default-base-is-moof: \(baseIsMoof)")
            #expect(FragmentIndex.firstSampleRange(segment: data, trackID: 9) == nil)
            // Only the head of the file (through the moof) is needed when the size is known.
            let head = Array(data[0..<(moofStart + moofSize + 16)])
            #expect(FragmentIndex.firstSampleRange(segment: head, fileSize: data.count, trackID: 7) == range)
        }
    }

    @Test func truncatedOrGarbageSegmentsGiveNoRange() {
        #expect(FragmentIndex.firstSampleRange(segment: [], trackID: 1) == nil)
        #expect(FragmentIndex.firstSampleRange(segment: Array(repeating: 0xFF, count: 64), trackID: 1) == nil)
        let moof = box("moof", traf(id: 1, baseIsMoof: true, dataOffset: 8, sizes: [1_000_000]))
        #expect(FragmentIndex.firstSampleRange(segment: moof + box("mdat", [1, 2, 3]), trackID: 1) == nil, "sample runs past the end")
    }

    @Test func iFramePlaylistAndMasterEntries() {
        let playlist = IFramePlaylist(map: "init.mp4", entries: [
            .init(uri: "seg_000.m4s", offset: 128, length: 25_000, duration: 2),
            .init(uri: "seg_001.m4s", offset: 128, length: 40_000, duration: 6),
        ])
        let text = playlist.render()
        #expect(text.contains("#EXT-X-I-FRAMES-ONLY\n"))
        #expect(text.contains("#EXT-X-TARGETDURATION:6\n"))
        #expect(text.contains("#EXTINF:2.000000,\n#EXT-X-BYTERANGE:25000@128\nseg_000.m4s\n"))
        #expect(playlist.bandwidth == RenditionBandwidth(peak: 100_000, average: 65_000))
        let master = MasterPlaylist.render([], iFrameStreams: [
            IFrameStream(uri: "360p/iframes.m3u8", bandwidth: playlist.bandwidth, codecs: "avc1.64001e", width: 360, height: 640)])
        #expect(master.contains(#"#EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=100000,AVERAGE-BANDWIDTH=65000,CODECS="avc1.64001e",RESOLUTION=360x640,URI="360p/iframes.m3u8""#))
    }
}
