import Foundation
import Testing
@testable import Transcode

@Suite struct PresetTests {
    static var presetsDirectory: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Presets").standardized.path
    }

    @Test func shippedDefaultPresetIsTheBuiltInOne() throws {
        let path = "\(Self.presetsDirectory)/default.json"
        let data = try #require(FileManager.default.contents(atPath: path))
        #expect(try Preset.decode(data, source: path) == Preset.builtIn)
    }

    @Test func contentHashChangesWithContent() {
        var changed = Preset.builtIn
        changed.rungs[0].crf += 1
        #expect(changed.contentHash != Preset.builtIn.contentHash)
        #expect(Preset.builtIn.contentHash == Preset.builtIn.contentHash)
    }

    private func decodeError(_ mutate: (inout [String: Any]) -> Void) throws -> TranscodeError? {
        var object = try JSONSerialization.jsonObject(with: Preset.builtIn.canonicalJSON()) as! [String: Any]
        mutate(&object)
        let data = try JSONSerialization.data(withJSONObject: object)
        do {
            _ = try Preset.decode(data, source: "test.json")
            return nil
        } catch let error as TranscodeError {
            return error
        }
    }

    @Test func badFieldsAreNamed() throws {
        func field(_ error: TranscodeError?) -> String? {
            if case .badPreset(_, let field, _) = error { return field }
            return nil
        }
        #expect(field(try decodeError { $0["rungs"] = [["name": "a", "shortSide": 360, "crf": 99, "maxrateKbps": 1, "bufsizeKbps": 1]] }) == "rungs[0].crf")
        #expect(field(try decodeError { $0["bogus"] = 1 }) == "bogus")
        #expect(field(try decodeError { var v = $0["video"] as! [String: Any]; v["frameRate"] = "thirty"; $0["video"] = v }) == "video.frameRate")
        #expect(field(try decodeError { var v = $0["video"] as! [String: Any]; v.removeValue(forKey: "level"); $0["video"] = v }) == "video.level")
        #expect(field(try decodeError { var a = $0["audio"] as! [String: Any]; a["channels"] = 6; $0["audio"] = a }) == "audio.channels")
        #expect(field(try decodeError { var v = $0["video"] as! [String: Any]; v["segmentSeconds"] = 61; $0["video"] = v }) == "video.segmentSeconds")
        #expect(field(try decodeError { var p = $0["preview"] as! [String: Any]; p["shortSide"] = 241; $0["preview"] = p }) == "preview.shortSide")
        #expect(field(try decodeError { var p = $0["preview"] as! [String: Any]; p["fps"] = 0; $0["preview"] = p }) == "preview.fps")
        #expect(field(try decodeError { var p = $0["preview"] as! [String: Any]; p["loop"] = 1; $0["preview"] = p }) == "preview.loop")
        #expect(field(try decodeError { var p = $0["preview"] as! [String: Any]; p.removeValue(forKey: "maxBytes"); $0["preview"] = p }) == "preview.maxBytes")
        #expect(field(try decodeError { var v = $0["video"] as! [String: Any]; v["initialBufferFill"] = 0; $0["video"] = v }) == "video.initialBufferFill")
        #expect(field(try decodeError { var v = $0["video"] as! [String: Any]; v["passthrough"] = "yes"; $0["video"] = v }) == "video.passthrough")
    }

    /// Presets written before passthrough and the start buffer existed load with the old behaviour's values.
    /// A rung's own x264 speed and options reach the plan; options that would break out of the
    /// option string, or change what the engine decides (keyframe grid, rate control), are refused.
    @Test func rungEncoderOptionsAreCheckedAndPlanned() throws {
        func reason(_ rung: [String: Any]) throws -> String? {
            let error = try decodeError { object in
                var rungs = object["rungs"] as! [[String: Any]]
                rungs[0].merge(rung) { $1 }
                object["rungs"] = rungs
            }
            if case .badPreset(_, let field, let reason) = error { return "\(field): \(reason)" }
            return nil
        }
        #expect(try reason(["encoderPreset": "slow", "x264Params": "b-adapt=0:rc-lookahead=10"]) == nil)
        #expect(try reason(["encoderPreset": "warp"])?.hasPrefix("rungs[0].encoderPreset") == true)
        for bad in ["keyint=300", "scenecut=40", "vbv-maxrate=99999", "b-adapt", "b-adapt=0:", "me=hex,crf=1:x=1",
                    "me=hex:stats=/etc/passwd", "ref=3\u{0}", "Ref=3", "ref=3:ref=4=5"] {
            #expect(try reason(["x264Params": bad])?.hasPrefix("rungs[0].x264Params") == true, "\(bad) accepted")
        }
        var preset = Preset.builtIn
        preset.rungs[1].encoderPreset = "medium"
        preset.rungs[1].x264Params = "weightp=0"
        let probe = SourceProbe(path: "/x.mp4", container: "mov,mp4", durationSeconds: 10, sizeBytes: 1_000_000, streamCount: 1,
                                video: VideoStreamInfo(codec: "h264", width: 1080, height: 1920, rotation: 0, frameRate: 30,
                                                       pixelFormat: "yuv420p", bitDepth: 8, colorTransfer: "bt709",
                                                       colorPrimaries: "bt709", colorSpace: "bt709"), audio: nil)
        let plan = try TranscodePlan.make(probe: probe, preset: preset)
        #expect(plan.rungs.map(\.encoderPreset) == [nil, "medium", nil, nil])
        #expect(plan.rungs.map(\.x264Params) == [nil, "weightp=0", nil, "b-adapt=0"])
    }

    @Test func presetsWithoutNewerVideoFieldsGetDefaults() throws {
        var object = try JSONSerialization.jsonObject(with: Preset.builtIn.canonicalJSON()) as! [String: Any]
        var video = object["video"] as! [String: Any]
        video.removeValue(forKey: "passthrough")
        video.removeValue(forKey: "initialBufferFill")
        object["video"] = video
        let decoded = try Preset.decode(try JSONSerialization.data(withJSONObject: object), source: "old.json")
        #expect(decoded.video.passthrough && decoded.video.initialBufferFill == 0.25)
    }

    /// Presets written before the preview existed still load, with the standard preview.
    @Test func presetsWithoutAPreviewGetTheStandardOne() throws {
        var object = try JSONSerialization.jsonObject(with: Preset.builtIn.canonicalJSON()) as! [String: Any]
        object.removeValue(forKey: "preview")
        let decoded = try Preset.decode(try JSONSerialization.data(withJSONObject: object), source: "old.json")
        #expect(decoded.preview == .standard && decoded == Preset.builtIn)
    }

    @Test func loudnessNormalisationCanBeTurnedOff() throws {
        var preset = Preset.builtIn
        preset.audio.loudnessLUFS = nil
        let decoded = try Preset.decode(preset.canonicalJSON(), source: "off.json")
        #expect(decoded.audio.loudnessLUFS == nil)
        #expect(String(decoding: preset.canonicalJSON(), as: UTF8.self).contains("\"loudnessLUFS\" : null"))
        let plan = try TranscodePlan.make(probe: SourceProbe(path: "a.mp4", container: "mov", durationSeconds: 5, sizeBytes: 1, streamCount: 2,
                                                             video: VideoStreamInfo(codec: "h264", width: 640, height: 360, frameRate: 30),
                                                             audio: AudioStreamInfo(codec: "aac", sampleRate: 48000, channels: 2)),
                                          preset: decoded)
        #expect(!plan.audioFilterGraph.contains("loudnorm"))
    }

    @Test func unknownPresetNameFails() {
        #expect(throws: TranscodeError.self) { try Preset.load("nope", searchDirectories: [Self.presetsDirectory]) }
    }
}
