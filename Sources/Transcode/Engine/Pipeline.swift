import Foundation
internal import CFFmpeg

/// What the pipeline measured while running.
struct PipelineResult {
    var videoFrames: Int
    var videoSeconds: Double
    var audioSeconds: Double
    /// The RFC 6381 string of each written rung's video, by directory name.
    var codecs: [String: String]
    var posterSeconds: Double
    /// The preview loop as written, when the plan has one.
    var preview: PreviewResult?
    /// True when the timeline was cut at the duration limit (preset `overLength: trim`).
    var trimmedToLimit: Bool
    /// The caption tracks published beside the ladder.
    var captions: [ReadyManifest.Caption]
}

struct PreviewResult {
    var written: WebPWriter.Written
    var startSeconds: Double
}

/// The one pass: for each clip, demux → decode → normalise; then the joined timeline → fan-out
/// filter graph → rung encoders → muxers, with the sound laid on the same timeline.
///
/// Data only flows downstream. Each source packet is decoded once; every rung, the MP4 and the
/// thumbnails come from the same decoded frames; no intermediate file is written. Demuxing,
/// decoding, filtering and the audio encode run on the caller's thread; each rung encodes and
/// muxes on its own thread, and the preview is encoded on one of its own once the video ends.
final class Pipeline {
    private let plan: TranscodePlan
    private let clipFiles: [SourceFile]
    private let musicFile: SourceFile?
    private let layout: OutputLayout
    private var meter: ProgressMeter
    private let cancellation: CancellationFlag

    private let rungs: [RungEncoder]
    /// The H.264 top rung, which muxes a passed-through upload's packets.
    private let topRung: RungEncoder?
    /// The rungs each fan-out sink feeds (``TranscodePlan/fanOutSizes``).
    private let sinkRungs: [[RungEncoder]]
    /// The mix, or nil when the rungs carry the published sound (``TranscodePlan/reusesPublishedLadder``).
    private let sound: SoundStage?
    private let published: PublishedLadder?
    /// For a growing ladder: what opens it to players (closed for good when the run fails).
    private let gate: PlayableGate?
    /// The upload's caption tracks, or nil when it has none (or they are kept from the published version).
    private let captions: CaptionPublisher?
    private var fanOut: FilterGraph?

    private let filtered = Frame()
    /// The poster candidates' statistics frames (see ``pullVideo()``).
    private let posterStatistics = Frame()
    private var poster = PosterPicker()
    private var storyboard: Frame?
    private var preview: PreviewPicker?

    /// Frames on the joined timeline so far, and frames out of the first rung.
    private var timelineFrames = 0
    private var framesOut = 0
    private var trimmedToLimit = false
    /// Sum of the joined clips' decoded lengths, which the timeline's frame count follows.
    private var joinedSeconds = 0.0

    /// `playable`: the ladder grows in view (``TranscodeRequest/growing``), and this is called
    /// once, with the seconds every rung lists, when its master is written and a player can start;
    /// `listed` then each time every rung lists more (`ended`: every rung has ended).
    init(plan: TranscodePlan, clipFiles: [SourceFile], musicFile: SourceFile?, captions: [CaptionSource] = [], layout: OutputLayout,
         published: PublishedLadder?, cancellation: CancellationFlag, progress: @escaping @Sendable (TranscodeProgress) -> Void,
         playable: (@Sendable (Double) -> Void)? = nil, listed: (@Sendable (Double, Bool) -> Void)? = nil) throws {
        precondition(clipFiles.count == plan.clips.count && (musicFile != nil) == (plan.music != nil), "one file per input")
        self.plan = plan
        self.clipFiles = clipFiles
        self.musicFile = musicFile
        self.layout = layout
        self.cancellation = cancellation
        preview = plan.preview.map { PreviewPicker(length: $0.frames) }
        meter = ProgressMeter(totalSeconds: plan.estimatedSeconds, report: progress)
        precondition(plan.reusesPublishedLadder == (published != nil), "a published ladder exactly when the plan keeps one")
        self.published = published
        let sound = plan.reusesPublishedLadder ? nil : try SoundStage(plan: plan, musicFile: musicFile)
        self.sound = sound
        let written = plan.writtenRungs
        for directory in [layout.directory] + written.map(layout.rungDirectory) {
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            } catch {
                throw TranscodeError.writeFailed(directory, error)
            }
        }
        var topSource = RungEncoder.Source.encode
        if plan.copiesUploadIntoTopRung {
            let input = try InputContext(file: clipFiles[0])
            guard let video = input.bestStream(AVMEDIA_TYPE_VIDEO) else { throw TranscodeError.noVideoStream(path: input.path) }
            let parameters = try StreamParameters(input: input, streamIndex: video)
            parameters.tagUnspecifiedColourAsBT709()
            topSource = .copy(parameters)
        }
        let threads = Self.encoderThreads(written, cores: ProcessInfo.processInfo.activeProcessorCount)
        var publishedSound: [[Packet]] = []
        var h264: [String: RungEncoder] = [:]
        let av1 = written.filter { $0.codec == .av1 }.count
        let restarts = av1 > 0 ? RestartBarrier(parties: av1) : nil
        let gate = playable == nil || published != nil ? nil
            : PlayableGate(rungs: written.count, targetDuration: plan.targetDurationSeconds, totalSeconds: plan.estimatedSeconds)
        let rungs = try written.enumerated().map { index, rung in
            let isTop = plan.isTopH264(rung)
            let soundSource: RungEncoder.Sound
            var delay = h264[rung.name]?.decodeDelayFrames
            if let published {
                let kept = try published.sound(of: rung, frameRate: plan.frameRate, scratch: layout.directory)
                soundSource = .copied(kept.parameters)
                publishedSound.append(kept.packets)
                delay = kept.videoDelayFrames
            } else {
                soundSource = .encoded(sound!.encoder(kbps: rung.audioBitrateKbps))
            }
            let encoder = try RungEncoder(rung: rung, source: isTop ? topSource : .encode, threads: threads[index], plan: plan,
                                          layout: layout, sound: soundSource, writesMP4: isTop,
                                          alignsDelay: rung.codec == .h264 ? nil : delay,
                                          restarts: rung.codec == .av1 ? restarts : nil, gate: gate.map { ($0, index) })
            if rung.codec == .h264 { h264[rung.name] = encoder }
            return encoder
        }
        self.rungs = rungs
        self.gate = gate
        topRung = zip(written, rungs).first { plan.isTopH264($0.0) }?.1
        let captions = published != nil ? nil
            : try CaptionPublisher(captions, plan: plan, layout: layout,
                                   firstPTS: Double(topRung?.decodeDelayFrames ?? 0) / Double(plan.frameRate))
        self.captions = captions
        if let gate, let playable {
            let codecs = Dictionary(uniqueKeysWithValues: rungs.map { ($0.rung.directoryName, $0.codecString) })
            let frames = { (seconds: Double) in Int((seconds * Double(plan.frameRate)).rounded()) }
            gate.open = { seconds in
                try captions?.list(frames: frames(seconds))
                try ManifestWriter.writeGrowingMaster(plan: plan, layout: layout, codecs: codecs, captions: captions?.planned ?? [])
                playable(seconds)
            }
            gate.grew = { seconds, ended in
                // A subtitle segment that cannot be written leaves the playlist as it was; the end writes it.
                try? captions?.list(frames: frames(seconds))
                listed?(seconds, ended)
            }
        }
        let encoded = plan.encodedRungs
        sinkRungs = plan.fanOutSizes.indices.map { sink in
            zip(written, rungs).filter { plan.fanOutSink(of: $0.0) == sink && encoded.contains($0.0) }.map(\.1)
        }
        sound?.connect(rungs)
        rungs.forEach { $0.start() }
        // The published sound goes in first, whole (a few hundred kB): each muxer holds it until
        // the video reaches it (``RungEncoder``: no interleaving deadline for copied sound).
        do {
            for (rung, packets) in zip(rungs, publishedSound) {
                for packet in packets { try rung.submit(.audio(packet.reference())) }
            }
        } catch {
            rungs.forEach { $0.abandon() }
            throw error
        }
    }

    /// Encoder threads per rung: the cores shared in proportion to each rung's pixels, rounded
    /// up. The rungs encode in parallel, so giving every encoder all the cores (x264's default)
    /// oversubscribes them: on 2 cores 1080p gets 2 and the smaller rungs 1 each, which measured
    /// 0.94× the CPU and 0.90× the peak memory of the default on a camera original. A passed-
    /// through top rung keeps its share (its thread count is unused): the upload is still decoded
    /// at its size, on the same cores. So its 720p encodes on one thread, which measured 0.95× the
    /// wall time and 0.99× the CPU of two on an app upload (frame threads wait on each other).
    static func encoderThreads(_ rungs: some Collection<TranscodePlan.PlannedRung>, cores: Int) -> [Int] {
        let pixels = rungs.map { Double($0.width * $0.height) }
        let total = pixels.reduce(0, +)
        return pixels.map { max(1, Int((Double(max(1, cores)) * $0 / max(total, 1)).rounded(.up))) }
    }

    func run() throws -> PipelineResult {
        do {
            return try runLoop()
        } catch {
            gate?.close()  // a rung that still finishes while the others stop must not show the video
            rungs.forEach { $0.abandon() }
            throw error
        }
    }

    private func runLoop() throws -> PipelineResult {
        for (index, (clip, file)) in zip(plan.clips, clipFiles).enumerated() where !trimmedToLimit {
            try join(clip, index: index, file: file, isLast: index == plan.clips.count - 1)
        }
        guard let fanOut else { throw TranscodeError.internalFailure("no video reached the timeline") }
        try fanOut.close(at: Int64(timelineFrames))
        try pullVideo()
        if sinkRungs.isEmpty { framesOut = timelineFrames }  // nothing encoded: the timeline is the video
        if let published { try published.checkLength(frames: framesOut) }
        let videoSeconds = Double(framesOut) / Double(plan.frameRate)
        // The video is complete: the encoders drain and the preview is encoded while the sound
        // finishes (the loudness filter's last seconds) and the thumbnails are written.
        for rung in rungs { try rung.submit(.videoEnd) }
        let previewWriter = startPreview()
        defer { _ = try? previewWriter?.join() }  // never leave it writing after a failure
        try sound?.finish(frames: framesOut)
        rungs.forEach { $0.endInput() }
        try writeThumbnails(duration: videoSeconds)
        let previewResult = try previewWriter?.join()
        for rung in rungs { try rung.finish() }
        let captions = try self.captions?.finish(frames: framesOut) ?? published?.manifest.captions ?? []
        meter.update(outputSeconds: videoSeconds, frames: framesOut, force: true)
        let audioSeconds = sound?.secondsOut ?? published?.manifest.audio.durationSeconds ?? 0
        var codecs = Dictionary(uniqueKeysWithValues: rungs.map { ($0.rung.directoryName, $0.codecString) })
        if let published {
            for rung in plan.rungs { codecs[rung.directoryName] = try published.codecString(of: rung.name) }
        }
        return PipelineResult(videoFrames: framesOut, videoSeconds: videoSeconds, audioSeconds: audioSeconds,
                              codecs: codecs,
                              posterSeconds: poster.best?.seconds ?? 0, preview: previewResult,
                              trimmedToLimit: trimmedToLimit, captions: captions)
    }

    /// Appends one clip to the timeline: its frames continue the timeline's frame numbers, its
    /// sound is laid from the same instant. Each clip's last frame is held back until the clip
    /// ends, then appended once, twice or not at all, so that the joined length stays within half
    /// a frame of the sum of the clips' decoded lengths however many clips there are.
    private func join(_ clip: PlannedClip, index: Int, file: SourceFile, isLast: Bool) throws {
        let reader = try ClipReader(clip: clip, file: file, plan: plan,
                                    forwardsVideoPackets: plan.copiesUploadIntoTopRung)
        var clipFrames = 0
        var held: Frame?
        try sound?.beginClip(atFrame: timelineFrames, hasSound: clip.usesSound, isLast: isLast)
        captions?.clipBegan(index, atFrame: timelineFrames)
        while let output = try reader.next() {
            if cancellation.isCancelled { throw TranscodeError.cancelled }
            switch output {
            case .video(let frame):
                if let previous = held { try append(previous, clipFrames: &clipFrames, path: reader.path) }
                held = frame.reference()
            case .audio(let frame):
                try sound?.clipSound(frame, clipFrames: clipFrames, timelineFrames: timelineFrames)
            case .videoPacket(let packet):
                guard let topRung else { throw TranscodeError.internalFailure("a copied packet with no top rung to take it") }
                try topRung.submit(.packet(packet))
            }
            if trimmedToLimit { break }
        }
        if let last = held, !trimmedToLimit {
            joinedSeconds += reader.decodedSeconds
            let wanted = Int((joinedSeconds * Double(plan.frameRate)).rounded())
            let next = timelineFrames + 1
            let copies: Int
            if plan.clips.count == 1 {
                copies = 1
            } else if next > wanted, clipFrames > 0 {
                copies = 0  // the timeline is a frame ahead: drop the clip's last frame
            } else if next < wanted {
                copies = 2  // a frame behind: show it twice
            } else {
                copies = 1
            }
            for _ in 0..<copies where !trimmedToLimit { try append(last, clipFrames: &clipFrames, path: reader.path) }
        }
        try sound?.endClip(clipFrames: clipFrames)
        captions?.clipEnded(index, frames: clipFrames)
    }

    /// Puts one normalised frame on the timeline and pushes everything downstream it allows.
    private func append(_ frame: Frame, clipFrames: inout Int, path: String) throws {
        guard try admitFrame(path: path) else { return }
        frame.pts = Int64(timelineFrames)
        if fanOut == nil { fanOut = try makeFanOut(frame) }
        try fanOut!.push(frame)
        timelineFrames += 1
        clipFrames += 1
        meter.update(outputSeconds: Double(timelineFrames) / Double(plan.frameRate), frames: timelineFrames)
        try sound?.videoAppended(clipFrames: clipFrames, timelineFrames: timelineFrames)
        try pullVideo()
    }

    /// Applies the duration limit to decoded time (``Admission/admitFrame(after:frameRate:path:clips:)``):
    /// false once the timeline is full under `overLength: trim`.
    private func admitFrame(path: String) throws -> Bool {
        let admitted = try plan.admission.admitFrame(after: timelineFrames, frameRate: plan.frameRate, path: path, clips: plan.clips.count)
        if !admitted { trimmedToLimit = true }
        return admitted
    }

    /// The fan-out runs its scalers on this thread alone: the rung encoders already keep every
    /// core busy, and slice threads only added hand-offs (3.5 % longer wall time, measured).
    private func makeFanOut(_ frame: Frame) throws -> FilterGraph {
        try FilterGraph(description: plan.videoFilterGraph,
                        sources: [.video(like: frame, timeBase: AVRational(num: 1, den: Int32(plan.frameRate)))],
                        sinks: Array(repeating: "buffersink", count: plan.videoSinkCount), threads: 1)
    }

    /// Pulls every graph output until it needs more input (or has ended), encoding as it goes.
    private func pullVideo() throws {
        guard let graph = fanOut else { return }
        for (sink, consumers) in sinkRungs.enumerated() {
            while try graph.pull(sink, into: filtered) == .ready {
                let frame = Int(av_rescale_q(filtered.pts, graph.sinkTimeBase(sink),
                                             AVRational(num: 1, den: Int32(plan.frameRate))))
                filtered.pts = Int64(frame)
                filtered.forceKeyframe(plan.isKeyframe(frame: frame))
                for rung in consumers { try rung.submit(.frame(filtered.reference())) }
                if sink == 0 { framesOut += 1 }
            }
        }
        // A candidate and its statistics leave the same `split` together: one each, in step.
        while try graph.pull(plan.posterSinkIndex, into: filtered) == .ready {
            guard try graph.pull(plan.posterStatisticsSinkIndex, into: posterStatistics) == .ready else {
                throw TranscodeError.internalFailure("a poster candidate came without its statistics")
            }
            poster.consider(filtered, statistics: posterStatistics,
                            seconds: Double(filtered.pts) * av_q2d(graph.sinkTimeBase(plan.posterSinkIndex)))
        }
        while try graph.pull(plan.storyboardSinkIndex, into: filtered) == .ready {
            if storyboard == nil { storyboard = filtered.reference() }
        }
        if let index = plan.previewSinkIndex {
            while try graph.pull(index, into: filtered) == .ready {
                preview?.consider(filtered, seconds: Double(filtered.pts) * av_q2d(graph.sinkTimeBase(index)))
            }
        }
        try sound?.videoEncoded(frames: framesOut)
    }

    /// Encodes the chosen preview loop within the plan's byte budget, on a thread of its own
    /// (the picked frames are handed over: nothing else touches them).
    private func startPreview() -> WorkerThread<PreviewResult>? {
        guard let planned = plan.preview, let picker = preview else { return nil }
        let path = layout.preview
        return WorkerThread(name: "preview") {
            guard !picker.best.isEmpty else { throw TranscodeError.internalFailure("preview graph produced no frame") }
            let written = try WebPWriter.write(picker.best, fps: planned.fps, maxBytes: planned.maxBytes, to: path)
            return PreviewResult(written: written, startSeconds: picker.bestStartSeconds)
        }
    }

    private func writeThumbnails(duration: Double) throws {
        guard let best = poster.best?.frame else {
            throw TranscodeError.corruptInput(path: plan.clips[0].source.path, detail: "no frame available for a poster")
        }
        let sizes = plan.posters
        let posterGraph = try FilterGraph(description: plan.posterFilterGraph,
                                          sources: [.video(like: best, timeBase: AVRational(num: 1, den: 1), pixelAspect: AVRational(num: 1, den: 1))],
                                          sinks: Array(repeating: "buffersink", count: sizes.count))
        best.pts = 0
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
            throw TranscodeError.writeFailed(layout.storyboardTrack, error)
        }
    }
}
