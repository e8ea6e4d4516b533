import Foundation
import Testing
@testable import Transcode

/// The app's caption files (issue #68), read as a stranger's: what is refused, with the line and
/// the reason, and what is cleaned as a WebVTT player would ignore it.
struct CaptionReaderTests {
    func read(_ text: String) throws -> CaptionTrack { try CaptionReader.read(Data(text.utf8)) }

    func refusal(_ text: String) -> String? {
        do { _ = try read(text); return nil } catch { return (error as? CaptionTrack.Refusal)?.reason ?? "\(error)" }
    }

    @Test func webVTTAndSRTReadAlike() throws {
        let vtt = try read("\u{FEFF}WEBVTT - a title\r\n\r\nNOTE made on the phone\r\n\r\n1\r\n00:00:01.000 --> 00:00:02.500 align:start\r\nHello <i>there</i>\r\n\r\n02:03.250 --> 02:04.000\r\n<v Alice>Hi\n")
        #expect(vtt.cues == [.init(start: 1, end: 2.5, text: "Hello <i>there</i>"), .init(start: 123.25, end: 124, text: "<v Alice>Hi")])
        let srt = try read("1\n00:00:01,000 --> 00:00:02,500\nHello <font color=\"red\">there</font>\n\n2\n00:02:03,250 --> 00:02:04,000\nline one\nline two\n")
        #expect(srt.cues == [.init(start: 1, end: 2.5, text: "Hello there"), .init(start: 123.25, end: 124, text: "line one\nline two")])
        #expect(srt.webVTT == "WEBVTT\n\n00:00:01.000 --> 00:00:02.500\nHello there\n\n00:02:03.250 --> 00:02:04.000\nline one\nline two\n")
    }

    @Test func markupABrowserWouldRunNeverSurvives() throws {
        let track = try read("""
            WEBVTT

            STYLE
            ::cue { background: url(https://evil.example/x.png) }

            00:00:01.000 --> 00:00:02.000
            <script>alert(1)</script><b onclick="x">bold</b> <c.yellow.big>c</c> <img src=x onerror=alert(1)>

            00:00:03.000 --> 00:00:04.000
            a < b && c > d &amp; &lt;tag&gt; <00:00:03.500>karaoke <ruby>漢<rt>kan</rt></ruby> <lang en-GB>colour</lang>
            """)
        #expect(track.cues.map(\.text) == [
            "alert(1)<b>bold</b> <c.yellow.big>c</c> ",
            "a &lt; b &amp;&amp; c &gt; d &amp; &lt;tag&gt; <00:00:03.500>karaoke <ruby>漢<rt>kan</rt></ruby> <lang en-GB>colour</lang>",
        ])
        #expect(!track.webVTT.contains("url(") && !track.webVTT.contains("script") && !track.webVTT.contains("onclick"))
    }

    @Test func whatIsRefusedSaysWhereAndWhy() {
        #expect(refusal("WEBVTT\n\n00:00:02.000 --> 00:00:03.000\nb\n\n00:00:01.000 --> 00:00:04.000\na\n")?.contains("time order") == true)
        #expect(refusal("WEBVTT\n\n00:00:61.000 --> 00:01:02.000\nx\n")?.contains("line 3") == true)
        #expect(refusal("WEBVTT\n\n-00:00:01.000 --> 00:00:02.000\nx\n")?.contains("is not") == true)
        #expect(refusal("WEBVTT\n\njust text, no timing\n")?.contains("no `start --> end`") == true)
        #expect(refusal("WEBVTT\n\n00:00:01.000 --> 00:00:02.000\n" + String(repeating: "x", count: 201) + "\n")?.contains("over the limit of 200") == true)
        #expect(refusal("WEBVTT\n\n00:00:01.000 --> 00:00:02.000\na\nb\nc\nd\ne\n")?.contains("5 lines") == true)
        #expect(refusal("WEBVTT\n\n99999:00:00.000 --> 99999:00:01.000\nx\n") != nil, "past the limit, or not a time")
        #expect(refusal("WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nnul\u{0}here\n")?.contains("control character") == true)
        #expect((try? CaptionReader.read(Data([0x57, 0x45, 0xFF, 0xFE]))) == nil, "not UTF-8")
        var many = "WEBVTT\n\n"
        for index in 0..<2001 { many += "\(CaptionTrack.timestamp(Double(index))) --> \(CaptionTrack.timestamp(Double(index) + 0.5))\nx\n\n" }
        #expect(refusal(many)?.contains("more than 2000 cues") == true)
        #expect(refusal(String(repeating: "x", count: 600 << 10))?.contains("over the limit") == true)
    }

    @Test func whatAPlayerIgnoresIsRemoved() throws {
        // A cue ending before it starts, an empty one after cleaning, overlapping cues (kept: WebVTT allows them).
        let track = try read("WEBVTT\n\n00:00:02.000 --> 00:00:01.000\nbackwards\n\n00:00:03.000 --> 00:00:04.000\n<script></script>\n\n00:00:05.000 --> 00:00:07.000\na\n\n00:00:06.000 --> 00:00:08.000\nb\n")
        #expect(track.cues.map(\.text) == ["a", "b"])
        #expect(try read("WEBVTT\n").cues.isEmpty)
    }
}

/// A clip's cues on the output timeline, and the track cut into WebVTT segments (issue #68).
struct CaptionTimelineTests {
    @Test func cuesMoveAndAreCutWithTheirClip() {
        let track = CaptionTrack(cues: [.init(start: 0, end: 0.9, text: "cut by the trim"), .init(start: 0.5, end: 1.5, text: "a"),
                                        .init(start: 2.5, end: 4, text: "b"), .init(start: 5, end: 6, text: "past the clip")])
        let placed = CaptionTimeline.place(track, .init(from: 1, to: 3, at: 5))
        #expect(placed == [.init(start: 5, end: 5.5, text: "a"), .init(start: 6.5, end: 7, text: "b")])
        let merged = CaptionTimeline.merge([placed, [.init(start: 0.5, end: 1, text: "first clip"), .init(start: 6.8, end: 9, text: "to the end")]], duration: 8)
        #expect(merged.cues.map(\.text) == ["first clip", "a", "b", "to the end"] && merged.cues.last?.end == 8)
    }

    @Test func segmentsCarryTheCuesTheyOverlapAndTheTimestampMap() {
        let track = CaptionTrack(cues: [.init(start: 0.5, end: 1, text: "one"), .init(start: 1.5, end: 2.5, text: "over the boundary")])
        let segments = CaptionSegments(track, boundaries: [0, 2, 4, 5], firstPTS: 1.0 / 15, ended: true)
        #expect(segments.files.map(\.name) == ["seg_000.vtt", "seg_001.vtt", "seg_002.vtt"])
        #expect(segments.files[0].text == "WEBVTT\nX-TIMESTAMP-MAP=MPEGTS:6000,LOCAL:00:00:00.000\n\n00:00:00.500 --> 00:00:01.000\none\n\n00:00:01.500 --> 00:00:02.500\nover the boundary\n")
        #expect(segments.files[1].text.contains("over the boundary") && !segments.files[2].text.contains("-->"))
        #expect(segments.playlist == "#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:0\n#EXT-X-PLAYLIST-TYPE:VOD\n"
                + "#EXTINF:2.000,\nseg_000.vtt\n#EXTINF:2.000,\nseg_001.vtt\n#EXTINF:1.000,\nseg_002.vtt\n#EXT-X-ENDLIST\n")
        #expect(CaptionSegments(track, boundaries: [0, 2], firstPTS: 0, ended: false).playlist.contains("EVENT"))
        // Every segment reads back as a caption file.
        for file in segments.files { #expect((try? CaptionReader.read(Data(file.text.utf8))) != nil, "\(file.name)") }
    }
}

/// The master's subtitles group, rendered and revised; the names a published track may have.
struct CaptionPublishingTests {
    static let english = ReadyManifest.Caption(language: "en", name: "English", source: "app", playlist: "subs-en/index.m3u8",
                                               track: "captions-en.vtt", cues: 1, text: "hi")

    @Test func theGroupIsNamedByEveryVariantAndRevisedInPlace() {
        let variant = VariantStream(uri: "360p/index.m3u8", bandwidth: RenditionBandwidth(peak: 1000, average: 900),
                                    codecs: "avc1.64001e,mp4a.40.2", width: 360, height: 640, frameRate: 30)
        let plain = MasterPlaylist.render([variant])
        let with = MasterPlaylist.render([variant], captions: [Self.english])
        #expect(with.contains(#"#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="subs",LANGUAGE="en",NAME="English",DEFAULT=NO,AUTOSELECT=YES,URI="subs-en/index.m3u8""#))
        #expect(with.contains(#"FRAME-RATE=30.000,SUBTITLES="subs""#) && !plain.contains("SUBTITLES"))
        #expect(MasterPlaylist.replacingCaptions(plain, with: [Self.english]) == with)
        #expect(MasterPlaylist.replacingCaptions(with, with: []) == plain)
        #expect(MasterPlaylist.replacingCaptions(with, with: [Self.english]) == with, "applied twice, the same")
    }

    @Test func onlyNamesIngestdGivesAreTakenFromAManifest() {
        #expect(OutputLayout.captionFiles(Self.english) == "subs-en")
        var revised = Self.english
        (revised.playlist, revised.track) = ("subs-fr.0a1b2c3d/index.m3u8", "captions-fr.0a1b2c3d.vtt")
        #expect(OutputLayout.captionFiles(revised) == "subs-fr.0a1b2c3d")
        for (playlist, track) in [("../x/index.m3u8", "captions-en.vtt"), ("subs-en/../../index.m3u8", "captions-en.vtt"),
                                  ("subs-en/index.m3u8", "../captions-en.vtt"), ("subs-en/index.m3u8", "captions-../x.vtt"),
                                  ("/subs-en/index.m3u8", "captions-en.vtt"), ("subs-en/other.m3u8", "captions-en.vtt")] {
            var hostile = Self.english
            (hostile.playlist, hostile.track) = (playlist, track)
            #expect(OutputLayout.captionFiles(hostile) == nil, "\(playlist) \(track)")
        }
    }

    @Test func theWordsAreTheTextAViewerReads() {
        let track = CaptionTrack(cues: [.init(start: 0, end: 1, text: "<v Alice><b>fish</b> &amp; chips</v>\nsecond &lt;line&gt;")])
        #expect(CaptionMarkup.words(of: track) == "fish & chips second <line>")
        #expect(CaptionRevision.revision(of: "a") == CaptionRevision.revision(of: "a") && CaptionRevision.revision(of: "a") != CaptionRevision.revision(of: "b"))
        #expect(CaptionSource.defaultName("pt-BR") == "Portuguese (Brazil)" && CaptionSource.defaultName("qq") == "qq")
        #expect(CaptionSource.isValidLanguage("zh-Hant-TW") && !CaptionSource.isValidLanguage("en_US") && !CaptionSource.isValidLanguage("e"))
    }
}
