import Foundation
import Testing
@testable import Transcode

/// Presets with other codecs (`codecLadders`) and what the plan makes of them, without FFmpeg.
@Suite struct CodecLadderTests {
    static let hot: Preset = {
        let path = "\(PresetTests.presetsDirectory)/hot.json"
        return try! Preset.decode(FileManager.default.contents(atPath: path)!, source: path)
    }()

    @Test func shippedHotPresetIsTheDefaultLadderPlusAV1AndHEVC() {
        var base = Self.hot
        base.name = Preset.builtIn.name
        base.codecLadders = nil
        #expect(base == Preset.builtIn, "the hot preset keeps the default H.264 ladder it adds to")
        #expect(Self.hot.codecLadders?.map(\.codec) == [.av1, .hevc])
        #expect(Self.hot.codecLadders?.allSatisfy { $0.rungs.map(\.name) == ["234p", "360p", "720p", "1080p"] } == true)
        #expect(Preset.builtIn.codecLadders == nil && !String(decoding: Preset.builtIn.canonicalJSON(), as: UTF8.self).contains("codecLadders"),
                "the default preset's content hash is unchanged")
    }

    @Test func codecRungsTakeTheirH264RungsSizeAndSound() throws {
        let plan = try TranscodePlan.make(probe: probe(width: 960, height: 540), preset: Self.hot)
        #expect(plan.rungs.map(\.name) == ["234p", "360p", "540p"])
        #expect(plan.codecRungs.map(\.directoryName) == ["av1-234p", "av1-360p", "av1-540p", "hevc-234p", "hevc-360p", "hevc-540p"],
                "the 720p rung of a 540p source is planned at 540p in every codec")
        for rung in plan.codecRungs {
            let h264 = try #require(plan.rungs.first { $0.name == rung.name })
            #expect(rung.width == h264.width && rung.height == h264.height && rung.audioBitrateKbps == h264.audioBitrateKbps)
        }
        #expect(plan.codecRungs.filter { $0.codec == .av1 }.allSatisfy { !$0.isCapped }, "SVT-AV1 1.4 cannot cap CRF")
        #expect(plan.codecRungs.filter { $0.codec == .hevc }.map(\.maxrateKbps) == plan.rungs.map(\.maxrateKbps))
        // Each size is scaled once and feeds its three rungs.
        #expect(plan.fanOutSizes.map { "\($0.width)x\($0.height)" } == ["416x234", "640x360", "960x540"])
        #expect(plan.videoFilterGraph.components(separatedBy: "scale=w=640:h=360:flags=bicubic").count == 2)
        var kept = plan
        kept.reusesPublishedLadder = true
        #expect(kept.writtenRungs == plan.codecRungs && kept.encodedRungs == plan.codecRungs)
        #expect(kept.fanOutSizes == plan.fanOutSizes)
    }

    @Test func badCodecLaddersAreRefusedWithTheirField() throws {
        func reason(_ ladder: [String: Any]) throws -> String? {
            var object = try JSONSerialization.jsonObject(with: Preset.builtIn.canonicalJSON()) as! [String: Any]
            object["codecLadders"] = [ladder]
            do {
                _ = try Preset.decode(try JSONSerialization.data(withJSONObject: object), source: "t.json")
                return nil
            } catch let error as TranscodeError {
                if case .badPreset(_, let field, let reason) = error { return "\(field): \(reason)" }
                return "\(error)"
            }
        }
        let av1: [String: Any] = ["codec": "av1", "encoderPreset": "8", "rungs": [["name": "360p", "crf": 40]]]
        #expect(try reason(av1) == nil)
        #expect(try reason(av1.merging(["encoderPreset": "medium"]) { $1 })?.hasPrefix("codecLadders[0].encoderPreset") == true)
        #expect(try reason(av1.merging(["codec": "h264"]) { $1 })?.hasPrefix("codecLadders[0].codec") == true)
        #expect(try reason(av1.merging(["codec": "vp9"]) { $1 })?.hasPrefix("codecLadders[0].codec") == true)
        #expect(try reason(av1.merging(["rungs": [["name": "480p", "crf": 40]]]) { $1 })?.hasPrefix("codecLadders[0].rungs[0].name") == true)
        #expect(try reason(av1.merging(["rungs": [["name": "360p", "crf": 70]]]) { $1 })?.hasPrefix("codecLadders[0].rungs[0].crf") == true)
        #expect(try reason(av1.merging(["rungs": [["name": "360p", "crf": 40, "maxrateKbps": 500, "bufsizeKbps": 750]]]) { $1 })?
            .hasPrefix("codecLadders[0].rungs[0].maxrateKbps") == true)
        let hevc: [String: Any] = ["codec": "hevc", "encoderPreset": "medium", "tune": "ssim", "rungs": [["name": "360p", "crf": 28, "maxrateKbps": 500]]]
        #expect(try reason(hevc)?.hasPrefix("codecLadders[0].rungs[0].bufsizeKbps") == true)
        #expect(try reason(hevc.merging(["tune": "fast"]) { $1 })?.hasPrefix("codecLadders[0].tune") == true)
    }

    @Test func masterListsEachSizeBestCodecFirst() {
        func variant(_ codec: VideoCodec, _ height: Int, _ peak: Int) -> VariantStream {
            VariantStream(uri: "\(codec.rawValue)-\(height)", bandwidth: .init(peak: peak, average: peak), codecs: "x",
                          width: height * 9 / 16, height: height, frameRate: 30, videoCodec: codec)
        }
        let text = MasterPlaylist.render([variant(.h264, 1920, 6_000_000), variant(.av1, 416, 90_000), variant(.h264, 416, 160_000),
                                          variant(.hevc, 1920, 3_000_000), variant(.av1, 1920, 2_000_000), variant(.hevc, 416, 120_000)])
        #expect(text.split(separator: "\n").filter { !$0.hasPrefix("#") } == ["av1-416", "hevc-416", "h264-416", "av1-1920", "hevc-1920", "h264-1920"])
    }
}
