import Foundation
internal import CFFmpeg

/// What the pipeline measured while running.
struct PipelineResult {
    var videoFrames: Int
    var videoSeconds: Double
    var audioSeconds: Double
    var codecs: [String]
    var posterSeconds: Double
}

/// The one pass: demux → decode → normalise/fan-out filter graph → rung encoders → muxers.
///
/// Data only flows downstream. Each source packet is decoded once; every rung, the MP4 and the
/// thumbnails come from the same decoded frames. Demuxing, decoding, filtering and the audio
/// encode run on the caller's thread; each rung encodes and muxes on its own thread.
final class Pipeline {
    private let plan: TranscodePlan
    private let input: InputContext
    private let layout: OutputLayout
    private var meter: ProgressMeter
    private let cancellation: CancellationFlag

    private let videoStream: Int
    private let audioStream: Int?
    private let videoDecoder: Decoder
    private let audioDecoder: Decoder?
    private let rungs: [RungEncoder]
    private let audio: AudioTrack
    private var graph: FilterGraph?

    private let packet = Packet()
    private let decoded = Frame()
    private let filtered = Frame()
    private var poster = PosterPicker()
    private var storyboard: Frame?

    private var videoOffset: Int64 = 0
    private var audioOffset: Int64 = 0
    private var lastVideoEnd: Int64 = 0
    private var framesDecoded = 0
    private var framesOut = 0
    private var damaged = 0

    init(plan: TranscodePlan, input: consuming InputContext, layout: OutputLayout, cancellation: CancellationFlag,
         progress: @escaping @Sendable (TranscodeProgress) -> Void) throws {
        self.plan = plan
        self.layout = layout
        self.cancellation = cancellation
        meter = ProgressMeter(totalSeconds: plan.source.durationSeconds, report: progress)
        guard let video = input.bestStream(AVMEDIA_TYPE_VIDEO) else { throw TranscodeError.noVideoStream(path: input.path) }
        videoStream = video
        let audioIndex = plan.audio.fromSource ? input.bestStream(AVMEDIA_TYPE_AUDIO) : nil
        audioStream = audioIndex
        videoDecoder = try Decoder(input: input, streamIndex: video)
        if let audioIndex {
            audioDecoder = try Decoder(input: input, streamIndex: audioIndex)
        } else {
            audioDecoder = nil
        }
        // Every stream is shifted by the same amount so the earliest starts at zero and sync holds.
        let start = Int64((input.startSeconds * Double(cff_time_base())).rounded())
        self.input = input
        videoOffset = av_rescale_q(start, cff_time_base_q(), videoDecoder.timeBase)
        if let audioDecoder { audioOffset = av_rescale_q(start, cff_time_base_q(), audioDecoder.timeBase) }

        let audio = try AudioTrack(plan: plan)
        self.audio = audio
        try FileManager.default.createDirectory(atPath: layout.directory, withIntermediateDirectories: true)
        for rung in plan.rungs {
            try FileManager.default.createDirectory(atPath: layout.rungDirectory(rung), withIntermediateDirectories: true)
        }
        let top = plan.rungs.count - 1
        rungs = try plan.rungs.enumerated().map { index, rung in
            try RungEncoder(rung: rung, plan: plan, layout: layout, audioEncoder: audio.encoder, writesMP4: index == top)
        }
        rungs.forEach { $0.start() }
    }

    func run() throws -> PipelineResult {
        do {
            return try runLoop()
        } catch {
            rungs.forEach { $0.abandon() }
            throw error
        }
    }

    private func runLoop() throws -> PipelineResult {
        while try input.read(into: packet) {
            if cancellation.isCancelled { throw TranscodeError.cancelled }
            if packet.streamIndex == videoStream {
                if !(try videoDecoder.send(packet)) { damaged += 1 }
                try receiveVideo()
            } else if packet.streamIndex == audioStream, let audioDecoder {
                if !(try audioDecoder.send(packet)) { damaged += 1 }
                try receiveAudio(audioDecoder)
            }
        }
        try videoDecoder.send(nil)
        try receiveVideo()
        if let audioDecoder {
            try audioDecoder.send(nil)
            try receiveAudio(audioDecoder)
        }
        guard framesDecoded > 0, let graph else {
            throw TranscodeError.corruptInput(path: input.path, detail: "no decodable video frames (\(damaged) damaged packets)")
        }
        try graph.close(at: lastVideoEnd)
        try pullVideo()
        let videoSeconds = Double(framesOut) / Double(plan.frameRate)
        try audio.closeInput()
        try audio.encode(upTo: videoSeconds, exact: true, into: rungs)
        try audio.finish(into: rungs)
        for rung in rungs { try rung.finish() }
        try writeThumbnails(duration: videoSeconds)
        meter.update(outputSeconds: videoSeconds, frames: framesOut, force: true)
        return PipelineResult(videoFrames: framesOut, videoSeconds: videoSeconds, audioSeconds: audio.secondsOut,
                              codecs: rungs.map { EncoderFactory.codecString(h264: $0.encoder) },
                              posterSeconds: poster.bestSeconds)
    }

    private func receiveVideo() throws {
        while try videoDecoder.receive(into: decoded, damaged: &damaged) == .ready {
            let f = decoded.pointer
            let timestamp = f.pointee.best_effort_timestamp
            guard timestamp != cff_nopts() else { damaged += 1; continue }
            f.pointee.pts = timestamp - videoOffset
            f.pointee.pict_type = AV_PICTURE_TYPE_NONE
            let duration = cff_frame_duration(f)
            lastVideoEnd = max(lastVideoEnd, f.pointee.pts + max(duration, 1))
            if graph == nil { graph = try makeVideoGraph(f) }
            try graph!.push(decoded)
            framesDecoded += 1
            try pullVideo()
        }
    }

    private func makeVideoGraph(_ f: UnsafeMutablePointer<AVFrame>) throws -> FilterGraph {
        let tb = videoDecoder.timeBase
        let sar = f.pointee.sample_aspect_ratio.num > 0 ? f.pointee.sample_aspect_ratio : AVRational(num: 1, den: 1)
        let arguments = "video_size=\(f.pointee.width)x\(f.pointee.height):pix_fmt=\(f.pointee.format)"
            + ":time_base=\(tb.num)/\(tb.den):pixel_aspect=\(sar.num)/\(sar.den)"
        let sinks = Array(repeating: "buffersink", count: plan.rungs.count + 2)
        return try FilterGraph(description: plan.videoFilterGraph,
                               sources: [FilterGraph.Source(filter: "buffer", arguments: arguments)], sinks: sinks)
    }

    private func receiveAudio(_ decoder: Decoder) throws {
        while try decoder.receive(into: decoded, damaged: &damaged) == .ready {
            let timestamp = decoded.pointer.pointee.best_effort_timestamp
            guard timestamp != cff_nopts() else { continue }
            decoded.pointer.pointee.pts = timestamp - audioOffset
            try audio.push(decoded, timeBase: decoder.timeBase)
        }
    }

    /// Pulls every graph output until it needs more input (or has ended), encoding as it goes.
    private func pullVideo() throws {
        guard let graph else { return }
        for (index, rung) in rungs.enumerated() {
            while try graph.pull(index, into: filtered) == .ready {
                let frame = Int(av_rescale_q(filtered.pointer.pointee.pts, graph.sinkTimeBase(index),
                                             AVRational(num: 1, den: Int32(plan.frameRate))))
                filtered.pointer.pointee.pts = Int64(frame)
                filtered.pointer.pointee.pict_type = plan.isKeyframe(frame: frame) ? AV_PICTURE_TYPE_I : AV_PICTURE_TYPE_NONE
                try rung.submit(.frame(filtered.reference()))
                if index == 0 { try countOutputFrame() }
            }
        }
        while try graph.pull(plan.posterSinkIndex, into: filtered) == .ready {
            poster.consider(filtered, seconds: Double(filtered.pointer.pointee.pts) * av_q2d(graph.sinkTimeBase(plan.posterSinkIndex)))
        }
        while try graph.pull(plan.storyboardSinkIndex, into: filtered) == .ready {
            if storyboard == nil { storyboard = filtered.reference() }
        }
        try audio.encode(upTo: Double(framesOut) / Double(plan.frameRate), exact: false, into: rungs)
    }

    private func countOutputFrame() throws {
        framesOut += 1
        let seconds = Double(framesOut) / Double(plan.frameRate)
        // Headers can lie about duration; decoded time is what counts.
        if seconds > plan.maxDurationSeconds + 1 / Double(plan.frameRate) {
            throw TranscodeError.limitExceeded(path: input.path, limit: "duration",
                                               measured: String(format: "more than %.2f s (decoded)", seconds),
                                               allowed: String(format: "%.0f s", plan.maxDurationSeconds))
        }
        meter.update(outputSeconds: seconds, frames: framesOut)
    }

    private func writeThumbnails(duration: Double) throws {
        guard let best = poster.best else {
            throw TranscodeError.corruptInput(path: input.path, detail: "no frame available for a poster")
        }
        let sizes = plan.posters
        let posterGraph = try FilterGraph(
            description: plan.posterFilterGraph,
            sources: [FilterGraph.Source(filter: "buffer", arguments:
                "video_size=\(best.pointer.pointee.width)x\(best.pointer.pointee.height):pix_fmt=\(best.pointer.pointee.format):time_base=1/1:pixel_aspect=1/1")],
            sinks: Array(repeating: "buffersink", count: sizes.count))
        best.pointer.pointee.pts = 0
        try posterGraph.push(best)
        try posterGraph.close(at: 1)
        for (index, size) in sizes.enumerated() {
            guard try posterGraph.pull(index, into: filtered) == .ready else {
                throw TranscodeError.internalFailure("poster graph produced no frame")
            }
            try JPEGWriter.write(filtered, to: "\(layout.directory)/\(OutputLayout.posterName(size))")
        }
        guard let storyboard else { throw TranscodeError.internalFailure("storyboard graph produced no frame") }
        try JPEGWriter.write(storyboard, to: layout.storyboardImage)
        let vtt = Storyboard.webVTT(sprite: OutputLayout.storyboardImageName, duration: duration, storyboard: plan.storyboard)
        do {
            try Data(vtt.utf8).write(to: URL(fileURLWithPath: layout.storyboardTrack))
        } catch {
            throw TranscodeError.outputFailed(path: layout.storyboardTrack, reason: error.localizedDescription)
        }
    }
}
