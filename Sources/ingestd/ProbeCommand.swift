import ArgumentParser
import Foundation
import Ingest
import Transcode

struct ProbeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "probe",
        abstract: "Show what an upload contains and what transcode would do with it, without encoding.",
        discussion: """
        Prints each clip's streams and how it is normalised (rotation, tone mapping, trim, fit), \
        the sound track, then the plan: output frame, the rungs with their sizes and rate control, \
        segment layout, and whether the top rung is the upload's own H.264 (passthrough) or \
        encoded, with the condition that decided it. upload.json and the preset's limits are checked; \
        an upload that would be rejected fails here with the same message and exit status as transcode (headers only: \
        limits on decoded time are enforced while transcoding).

        Examples:
          ingestd probe samples/portrait_rotated.mp4
          ingestd probe samples/upload --json | jq .plan.clips
        """
    )

    @Argument(help: "The video file or upload directory (with upload.json) to inspect.")
    var input: String

    @OptionGroup var presetOption: PresetOption

    @Flag(name: .long, help: "Print {plan, clipFilterGraphs, videoFilterGraph, audioFilterGraph} as JSON.")
    var json = false

    func run() throws {
        do {
            let preset = try presetOption.load()
            let upload = try Upload.open(input, limits: preset.limits)
            let plan = try Transcoder.plan(upload.request(outputDirectory: "", preset: preset))
            if json {
                struct Output: Encodable {
                    var plan: TranscodePlan
                    var clipFilterGraphs: [String]
                    var videoFilterGraph: String
                    var audioFilterGraph: String
                }
                let data = try JSONEncoder.ingestd.encode(Output(plan: plan, clipFilterGraphs: plan.clips.map(plan.clipVideoFilter),
                                                     videoFilterGraph: plan.videoFilterGraph,
                                                     audioFilterGraph: plan.audioFilterGraph))
                print(String(decoding: data, as: UTF8.self))
                return
            }
            for (index, clip) in plan.clips.enumerated() {
                let probe = clip.source, v = probe.video!
                print("clip \(index + 1): \(probe.path): \(probe.container), \(String(format: "%.2f", probe.durationSeconds)) s, \(probe.sizeBytes) bytes, \(probe.streamCount) streams")
                print("  video: \(v.codec) \(v.width)x\(v.height) \(v.pixelFormat) \(String(format: "%.2f", v.frameRate)) fps, rotation \(v.rotation)°, \(v.dynamicRange.rawValue) (\(v.colorTransfer))")
                if let a = probe.audio { print("  audio: \(a.codec) \(a.sampleRate) Hz, \(a.channels) ch\(clip.usesSound ? "" : " (not used)")") } else { print("  audio: none") }
                let trim = clip.startFrame > 0 || clip.endFrame != nil
                    ? "frames \(clip.startFrame)..<\(clip.endFrame.map(String.init) ?? "end")" : "none"
                print("  normalise: rotate \(clip.rotation)°, tone map \(clip.toneMapFrom == .sdr ? "no" : clip.toneMapFrom.rawValue), trim \(trim)\(clip.conform ? ", \(plan.clipFit.rawValue) into \(plan.displayWidth)x\(plan.displayHeight)" : "")")
            }
            if let music = plan.music {
                let a = music.source.audio!
                print("sound track: \(music.source.path): \(a.codec) \(a.sampleRate) Hz, \(a.channels) ch, \(String(format: "%.2f", music.source.durationSeconds)) s")
                print("  \(music.mode.rawValue) from \(music.offsetSeconds) s, music \(music.musicGainDB) dB\(music.mode == .mix ? ", clips \(music.clipGainDB) dB" : ""), \(music.loop ? "looped" : "silence after its end"), fade-out \(music.fadeOutSeconds) s")
            }
            if plan.music == nil, !plan.audio.clipSound { print("sound: none (a silent track will be generated)") }
            print("plan (preset \(plan.presetName) \(plan.presetHash)):")
            print("  frame \(plan.displayWidth)x\(plan.displayHeight), \(plan.frameRate) fps CFR, GOP \(plan.gopFrames) frames, about \(String(format: "%.2f", plan.estimatedSeconds)) s")
            for rung in plan.rungs {
                let copied = plan.passesTopRungThrough && rung == plan.topRung
                print("  \(rung.name): \(rung.width)x\(rung.height) " + (copied ? "the upload's own H.264, copied"
                    : "crf \(rung.crf) maxrate \(rung.maxrateKbps)k bufsize \(rung.bufsizeKbps)k"))
            }
            for rung in plan.codecRungs {
                print("  \(rung.directoryName): \(rung.width)x\(rung.height) \(rung.codec.rawValue) preset \(rung.encoderPreset ?? "-")"
                    + "\(rung.tune.map { " tune \($0)" } ?? "") crf \(rung.crf)"
                    + (rung.isCapped ? " maxrate \(rung.maxrateKbps)k bufsize \(rung.bufsizeKbps)k" : " (uncapped)"))
            }
            print("  top rung: \(plan.topRungDecision.mode.rawValue) (\(plan.topRungDecision.reason))")
            if let starts = plan.segmentStartFrames {
                print("  segments: at the upload's IDRs, starting at \(starts.map { String(format: "%g", Double($0) / Double(plan.frameRate)) }.joined(separator: ", ")) s")
            } else {
                print("  segments: \(plan.initialSegmentSeconds.map { String(format: "%g", $0) }.joined(separator: "+")) s then \(plan.segmentSeconds) s")
            }
        } catch {
            throw Report.fail(error, json: json)
        }
    }
}
