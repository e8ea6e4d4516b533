import ArgumentParser
import Foundation
import Transcode

struct ProbeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "probe",
        abstract: "Show what a file contains and what transcode would do with it, without encoding.",
        discussion: """
        Prints the source's streams, then the plan: upright size, rotation applied, tone mapping,
        the rungs with their sizes and rate control, segment layout and thumbnails. Limits from the
        preset are checked; a file that would be rejected fails here with the same message and exit
        status as transcode.

        Example:
          ingestd probe samples/portrait_rotated.mp4 --json | jq .plan.rungs
        """
    )

    @Argument(help: "The video file to inspect.")
    var input: String

    @OptionGroup var presetOption: PresetOption

    @Flag(name: .long, help: "Print {probe, plan, filterGraph} as JSON.")
    var json = false

    func run() throws {
        do {
            let preset = try presetOption.load()
            let probe = try MediaProbe.probe(path: input)
            let plan = try TranscodePlan.make(probe: probe, preset: preset)
            if json {
                struct Output: Encodable { var plan: TranscodePlan; var videoFilterGraph: String; var audioFilterGraph: String }
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
                let data = try encoder.encode(Output(plan: plan, videoFilterGraph: plan.videoFilterGraph,
                                                     audioFilterGraph: plan.audioFilterGraph))
                print(String(decoding: data, as: UTF8.self))
                return
            }
            let v = probe.video!
            print("\(input): \(probe.container), \(String(format: "%.2f", probe.durationSeconds)) s, \(probe.sizeBytes) bytes, \(probe.streamCount) streams")
            print("  video: \(v.codec) \(v.width)x\(v.height) \(v.pixelFormat) \(String(format: "%.2f", v.frameRate)) fps, rotation \(v.rotation)°, \(v.dynamicRange.rawValue) (\(v.colorTransfer))")
            if let a = probe.audio { print("  audio: \(a.codec) \(a.sampleRate) Hz, \(a.channels) ch") } else { print("  audio: none (silent track will be generated)") }
            print("plan (preset \(plan.presetName) \(plan.presetHash)):")
            print("  upright \(plan.displayWidth)x\(plan.displayHeight), \(plan.frameRate) fps CFR, GOP \(plan.gopFrames) frames, tone map: \(plan.toneMapFrom == .sdr ? "no" : plan.toneMapFrom.rawValue)")
            for rung in plan.rungs {
                print("  \(rung.name): \(rung.width)x\(rung.height) crf \(rung.crf) maxrate \(rung.maxrateKbps)k bufsize \(rung.bufsizeKbps)k")
            }
            print("  segments: \(plan.initialSegmentSeconds.map(String.init).joined(separator: "+")) s then \(plan.segmentSeconds) s")
        } catch {
            throw Report.fail(error, json: json)
        }
    }
}
