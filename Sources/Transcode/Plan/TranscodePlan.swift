/// What a transcode will do, computed from a probe and a preset without touching FFmpeg.
///
/// The plan fixes every decision up front — ladder sizes, keyframe and segment positions, the
/// normalisation filter graph, thumbnail layout — so it can be tested as a value and recorded
/// in the output manifest.
public struct TranscodePlan: Sendable, Codable, Equatable {
    /// The clips, in timeline order; a plain video file is a one-clip upload.
    public var clips: [PlannedClip]
    /// The sound track laid under the clips, if the upload has one.
    public var music: PlannedMusic?
    public var presetName: String
    public var presetHash: String
    /// The output frame (upright, before scaling to rungs). One clip: its own shape and size.
    /// Joined clips: 9:16 (16:9 when the first clip is landscape) at the first clip's short side,
    /// capped at the top preset rung's.
    public var displayWidth: Int
    public var displayHeight: Int
    /// How clips of another shape are fitted into the frame.
    public var clipFit: Preset.ClipFit
    public var frameRate: Int
    public var gopFrames: Int
    /// The H.264 ladder, smallest first (the top rung feeds the MP4).
    public var rungs: [PlannedRung]
    /// The preset's other codecs (``CodecLadder``), each at the size of the H.264 rung it names.
    public var codecRungs: [PlannedRung] = []
    /// True when the H.264 rungs, the MP4 and the sound are kept from the version already
    /// published (a hot reprocess): only ``codecRungs`` are encoded, and they carry the published
    /// rungs' sound, copied.
    public var reusesPublishedLadder = false
    public var audio: PlannedAudio
    public var posters: [PlannedSize]
    public var storyboard: PlannedStoryboard
    /// The animated preview loop; nil when the preset turns it off.
    public var preview: PlannedPreview?
    /// Length of every segment after the initial ones, in seconds.
    public var segmentSeconds: Int
    /// Lengths of the first segments, in seconds (short, so a slow link starts playing sooner).
    public var initialSegmentSeconds: [Double]
    public var level: String
    public var encoderPreset: String
    /// The preset's limits, which decoding checks again (headers can lie).
    public var admission: Admission
    /// Joined length estimated from the container headers and trims (decoding decides the real one).
    public var estimatedSeconds: Double
    /// Whether the top rung is the upload's own H.264 or encoded, and why.
    public var topRungDecision: TopRungDecision
    /// With a passed-through top rung: the segment starts, chosen among the upload's IDR frames
    /// (nil: from `initialSegmentSeconds` and `segmentSeconds`).
    public var segmentStartFrames: [Int]?

    public struct PlannedRung: Sendable, Codable, Equatable {
        public var name: String
        public var width: Int
        public var height: Int
        public var crf: Int
        public var maxrateKbps: Int
        public var bufsizeKbps: Int
        /// The AAC bitrate of this rung's sound.
        public var audioBitrateKbps: Int
        /// Rate-buffer fill at the start (x264 `vbv-init`), set on the startup rung only: the first
        /// one listed, where players begin, so its first segments cannot burst past the cap. The
        /// other rungs keep x264's default (0.9): starting them starved cost the top rung of a
        /// camera original 0.0034 SSIM at 0.92× the bytes (Benchmarks/quality.sh).
        public var initialBufferFill: Double?
        /// This rung's libx264 speed preset, when it differs from the plan's ``encoderPreset``.
        public var encoderPreset: String? = nil
        /// This rung's extra libx264 options (``Preset/Rung/x264Params``).
        public var x264Params: String? = nil
        public var codec: VideoCodec = .h264
        /// The encoder's `tune` (``CodecLadder/tune``).
        public var tune: String? = nil

        /// The rung's directory and its name in the master: `720p` for H.264, `av1-720p`, `hevc-720p`.
        public var directoryName: String { codec == .h264 ? name : "\(codec.rawValue)-\(name)" }
        /// False for a rung without a rate cap (`maxrateKbps` 0: AV1, whose SVT-AV1 cannot cap CRF).
        public var isCapped: Bool { maxrateKbps > 0 }
    }

    public struct PlannedAudio: Sendable, Codable, Equatable {
        /// True when the clips' own sound is part of the mix (some clip has audio and the music does
        /// not replace it). With neither clip sound nor music, a silent track keeps every output alike.
        public var clipSound: Bool
        public var sampleRate: Int
        public var channels: Int
        public var bitrateKbps: Int
        /// Loudness target (LUFS) and true-peak ceiling (dBTP) of the final mix; nil target: untouched.
        public var loudnessLUFS: Double?
        public var truePeakDBTP: Double
    }

    public struct PlannedSize: Sendable, Codable, Equatable {
        public var width: Int
        public var height: Int
    }

    public struct PlannedStoryboard: Sendable, Codable, Equatable {
        public var intervalSeconds: Int
        public var cellWidth: Int
        public var cellHeight: Int
        public var columns: Int
        public var rows: Int
    }

    /// The preview loop: `frames` consecutive frames at `fps` (fewer when the video is shorter), at
    /// the top rung's aspect, chosen while decoding and encoded as WebP within `maxBytes`.
    public struct PlannedPreview: Sendable, Codable, Equatable {
        public var width: Int
        public var height: Int
        public var fps: Int
        public var frames: Int
        public var maxBytes: Int
    }

    /// The top rung, which also feeds the progressive MP4.
    public var topRung: PlannedRung { rungs[rungs.count - 1] }
}

extension TranscodePlan {
    /// Plans a one-file transcode.
    public static func make(probe: SourceProbe, preset: Preset) throws -> TranscodePlan {
        try make(clips: [ClipSource(path: probe.path)], probes: [probe], preset: preset)
    }

    /// Builds the plan for `clips` (with their probes, in order) and an optional music track, or
    /// throws the reason the upload cannot be accepted under the preset's limits.
    public static func make(clips: [ClipSource], probes: [SourceProbe], music: MusicSource? = nil,
                            musicProbe: SourceProbe? = nil, preset: Preset) throws -> TranscodePlan {
        precondition(!clips.isEmpty && clips.count == probes.count, "one probe per clip")
        let admission = Admission(limits: preset.limits)
        let frameRate = preset.video.frameRate
        let uploadPath = clips.count == 1 ? probes[0].path : directory(of: probes[0].path)
        try admission.checkClipCount(clips.count, upload: uploadPath)
        var videos: [VideoStreamInfo] = []
        for probe in probes {
            guard let video = probe.video else { throw TranscodeError.noVideoStream(path: probe.path) }
            // Image demuxers (image2, png_pipe, jpeg_pipe, …) mean a picture, not a recording.
            if probe.container == "image2" || probe.container.hasSuffix("_pipe") {
                throw TranscodeError.stillImage(path: probe.path)
            }
            try admission.check(video: video, in: probe)
            videos.append(video)
        }
        for clip in clips + (music.map { [ClipSource(path: $0.path, startSeconds: $0.offsetSeconds)] } ?? []) {
            // Checked before any arithmetic: no number from an upload can trap a conversion.
            let seconds = [clip.startSeconds, clip.endSeconds ?? 0]
            guard seconds.allSatisfy({ $0.isFinite && $0 >= 0 && $0 <= Preset.Limits.longestSeconds }) else {
                throw TranscodeError.badTrim(path: clip.path, detail: "times must be 0...\(Int(Preset.Limits.longestSeconds)) s")
            }
        }
        if let musicProbe {
            try admission.checkSoundTrack(musicProbe)
            if let music, musicProbe.durationSeconds > 0, music.offsetSeconds >= musicProbe.durationSeconds {
                throw TranscodeError.badTrim(path: musicProbe.path, detail: String(
                    format: "offset %.3f s is at or past the end of the track (%.3f s)", music.offsetSeconds, musicProbe.durationSeconds))
            }
        }
        try admission.checkSize(probes.reduce(musicProbe?.sizeBytes ?? 0) { $0 + $1.sizeBytes }, upload: uploadPath)

        // Joined clips share one frame: 9:16 (16:9 when the first clip is landscape), as large as
        // the first clip's short side allows, capped at the top rung. A single clip keeps its shape.
        let first = videos[0]
        let topShort = preset.rungs[preset.rungs.count - 1].shortSide
        let short = even(min(min(first.displayWidth, first.displayHeight), topShort))
        let long = Int((Double(short) * 8 / 9).rounded()) * 2  // 16:9, nearest even
        let landscape = first.displayWidth > first.displayHeight
        let width = clips.count == 1 ? first.displayWidth : (landscape ? long : short)
        let height = clips.count == 1 ? first.displayHeight : (landscape ? short : long)

        let clipSound = music?.mode != .replace && probes.contains { $0.audio != nil }
        var planned: [PlannedClip] = []
        for (clip, (probe, video)) in zip(clips, zip(probes, videos)) {
            let known = probe.durationSeconds
            if known > 0, clip.startSeconds >= known {
                throw TranscodeError.badTrim(path: probe.path, detail: String(
                    format: "start %.3f s is at or past the end of the clip (%.3f s)", clip.startSeconds, known))
            }
            let end = known > 0 ? min(clip.endSeconds ?? known, known) : (clip.endSeconds ?? 0)
            planned.append(PlannedClip(
                source: probe,
                startFrame: Int((clip.startSeconds * Double(frameRate)).rounded()),
                endFrame: clip.endSeconds.map { Int(($0 * Double(frameRate)).rounded()) },
                rotation: video.rotation,
                toneMapFrom: video.dynamicRange,
                sourceColorMatrix: video.effectiveColorMatrix,
                reachesFanOutFullRange: clips.count == 1 && video.dynamicRange == .sdr && video.isFullRange,
                conform: clips.count > 1,
                usesSound: clipSound && probe.audio != nil,
                estimatedSeconds: max(0, end - clip.startSeconds)))
        }
        let estimated = try admission.admitDuration(estimated: planned.reduce(0) { $0 + $1.estimatedSeconds },
                                                    clips: clips.count, upload: uploadPath)

        var plannedMusic: PlannedMusic?
        if let music, let musicProbe {
            plannedMusic = PlannedMusic(source: musicProbe, offsetSeconds: music.offsetSeconds, mode: music.mode,
                                        clipGainDB: music.clipGainDB, musicGainDB: music.musicGainDB, loop: music.loop,
                                        fadeOutSeconds: music.fadeOutSeconds)
        }
        var rungs = ladder(width: width, height: height, rungs: preset.rungs, audioKbps: preset.audio.bitrateKbps)
        rungs[0].initialBufferFill = preset.video.initialBufferFill
        let codecRungs = Self.codecRungs(preset.codecLadders ?? [], h264: rungs, presetRungs: preset.rungs)
        let top = rungs[rungs.count - 1]
        let decision = TopRungDecision.decide(clips: planned, top: top, rungCount: rungs.count, preset: preset)
        let segmentStarts = decision.idrFrames.map {
            TopRungDecision.segmentStarts(idrFrames: $0, frames: planned[0].source.video?.packets?.frames ?? 0,
                                          initial: preset.video.initialSegmentSeconds,
                                          target: preset.video.segmentSeconds, frameRate: frameRate)
        }
        // x264's own keyframe interval never adds an IDR between the upload's.
        let gopFrames = decision.idrInterval ?? frameRate * preset.video.gopSeconds
        let posterSides = preset.thumbnails.posterShortSides.map { min($0, min(top.width, top.height)) }
        let posters = Array(Set(posterSides)).sorted().map { fit(width: width, height: height, shortSide: $0) }
        let cell = fit(width: width, height: height, shortSide: preset.thumbnails.storyboardShortSide)
        let interval = preset.thumbnails.storyboardIntervalSeconds
        let cells = max(1, Int((estimated / Double(interval)).rounded(.up)))
        let columns = min(preset.thumbnails.storyboardColumns, cells)
        let settings = preset.preview
        let previewSize = fit(width: top.width, height: top.height, shortSide: min(settings.shortSide, min(top.width, top.height)))
        let preview = settings.enabled ? PlannedPreview(width: previewSize.width, height: previewSize.height, fps: settings.fps,
                                                        frames: settings.seconds * settings.fps, maxBytes: settings.maxBytes) : nil

        var plan = TranscodePlan(
            clips: planned,
            music: plannedMusic,
            presetName: preset.name,
            presetHash: preset.contentHash,
            displayWidth: width,
            displayHeight: height,
            clipFit: preset.video.clipFit,
            frameRate: frameRate,
            gopFrames: gopFrames,
            rungs: rungs,
            audio: PlannedAudio(clipSound: clipSound, sampleRate: preset.audio.sampleRate,
                                channels: preset.audio.channels, bitrateKbps: preset.audio.bitrateKbps,
                                loudnessLUFS: preset.audio.loudnessLUFS, truePeakDBTP: preset.audio.truePeakDBTP),
            posters: posters,
            storyboard: PlannedStoryboard(intervalSeconds: interval, cellWidth: cell.width, cellHeight: cell.height,
                                          columns: columns, rows: (cells + columns - 1) / columns),
            preview: preview,
            segmentSeconds: preset.video.segmentSeconds,
            initialSegmentSeconds: preset.video.initialSegmentSeconds,
            level: preset.video.level,
            encoderPreset: preset.video.encoderPreset,
            admission: admission,
            estimatedSeconds: estimated,
            topRungDecision: decision,
            segmentStartFrames: segmentStarts
        )
        plan.codecRungs = codecRungs
        return plan
    }

    /// The other codecs' rungs, ladder by ladder in the preset's order: each at the size, sound and
    /// name of the planned H.264 rung made from the preset rung it names (none where that rung is
    /// not planned: the source is smaller).
    static func codecRungs(_ ladders: [CodecLadder], h264: [PlannedRung], presetRungs: [Preset.Rung]) -> [PlannedRung] {
        ladders.flatMap { ladder in
            ladder.rungs.compactMap { rung -> PlannedRung? in
                guard let index = presetRungs.firstIndex(where: { $0.name == rung.name }), index < h264.count else { return nil }
                var planned = h264[index]
                planned.codec = ladder.codec
                planned.crf = rung.crf
                planned.maxrateKbps = rung.maxrateKbps ?? 0
                planned.bufsizeKbps = rung.bufsizeKbps ?? 0
                planned.initialBufferFill = nil
                planned.encoderPreset = rung.encoderPreset ?? ladder.encoderPreset
                planned.x264Params = nil
                planned.tune = ladder.tune
                return planned
            }
        }
    }

    private static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// The rungs for an upright `width`×`height` source: preset rungs up to the source's short
    /// side, plus one rung at the source's own size when it falls between two preset rungs and
    /// is at least 1.25× the rung below (a 362p source gets 360p only, a 540p one 360p + 540p). Never
    /// upscales; the lowest rung is always produced (at the source size when that is smaller).
    static func ladder(width: Int, height: Int, rungs: [Preset.Rung], audioKbps: Int) -> [PlannedRung] {
        let sourceShort = even(min(width, height))
        var planned: [PlannedRung] = []
        for rung in rungs {
            let short = min(rung.shortSide, sourceShort)
            // A rung at the source's own size only when it is clearly above the previous one.
            if let last = planned.last, Double(short) < Double(min(last.width, last.height)) * 1.25 { break }
            let size = fit(width: width, height: height, shortSide: short)
            let name = short == rung.shortSide ? rung.name : "\(short)p"
            planned.append(PlannedRung(name: name, width: size.width, height: size.height, crf: rung.crf,
                                       maxrateKbps: rung.maxrateKbps, bufsizeKbps: rung.bufsizeKbps,
                                       audioBitrateKbps: rung.audioBitrateKbps ?? audioKbps, initialBufferFill: nil,
                                       encoderPreset: rung.encoderPreset, x264Params: rung.x264Params))
            if short < rung.shortSide { break }
        }
        return planned
    }

    /// Scales `width`×`height` so its short side is `shortSide`, both sides even.
    static func fit(width: Int, height: Int, shortSide: Int) -> PlannedSize {
        let scale = Double(shortSide) / Double(min(width, height))
        let w = width <= height ? shortSide : even(Int((Double(width) * scale).rounded()))
        let h = width <= height ? even(Int((Double(height) * scale).rounded())) : shortSide
        return PlannedSize(width: max(2, w), height: max(2, h))
    }

    static func even(_ value: Int) -> Int { max(2, value - value % 2) }

    /// True when output frame `index` starts a segment (and so must be an IDR frame).
    public func startsSegment(frame index: Int) -> Bool {
        if let segmentStartFrames { return segmentStartFrames.contains(index) }
        var start = 0
        for seconds in initialSegmentSeconds {
            if index == start { return true }
            start += Int((seconds * Double(frameRate)).rounded())
        }
        return index >= start && (index - start) % (segmentSeconds * frameRate) == 0
    }

    /// The length in frames of each segment of a `totalFrames`-frame output, as the plan cuts it.
    public func segmentFrameCounts(totalFrames: Int) -> [Int] {
        var counts: [Int] = []
        for frame in 0..<max(0, totalFrames) {
            if counts.isEmpty || startsSegment(frame: frame) { counts.append(0) }
            counts[counts.count - 1] += 1
        }
        return counts
    }

    /// An H.264 level as written in specs (`4.1`) as the codec numbers it (41).
    static func levelIDC(_ level: String) -> Int { Int(((Double(level) ?? 4.1) * 10).rounded()) }

    /// Output frames in the duration limit (see ``Admission/maxFrames(frameRate:)``).
    public var maxFrames: Int { admission.maxFrames(frameRate: frameRate) }

    /// Audio samples that cover `frames` video frames exactly.
    public func samples(forFrames frames: Int) -> Int64 {
        Int64(frames) * Int64(audio.sampleRate) / Int64(frameRate)
    }

    /// True when output frame `index` must be a keyframe: every GOP, and every segment start
    /// (short first segments need not fall on the GOP grid); with a passed-through top rung,
    /// exactly the upload's IDR frames.
    public func isKeyframe(frame index: Int) -> Bool {
        if let idrFrames = topRungDecision.idrFrames { return idrFrames.contains(index) }
        return index % gopFrames == 0 || startsSegment(frame: index)
    }

    /// True when the top rung is the upload's own packets.
    public var passesTopRungThrough: Bool { topRungDecision.mode == .passthrough }

    /// Every rung published: the H.264 ladder, then the other codecs'.
    public var allRungs: [PlannedRung] { rungs + codecRungs }

    /// The rungs this run writes (a muxer each): all but the H.264 ones kept from the published version.
    public var writtenRungs: [PlannedRung] { (reusesPublishedLadder ? [] : rungs) + codecRungs }

    /// True when this run muxes the upload's own H.264 packets as the top rung (passed through,
    /// and not kept from a published version).
    public var copiesUploadIntoTopRung: Bool { passesTopRungThrough && !reusesPublishedLadder }

    /// True for the H.264 top rung (which also feeds the MP4), not its AV1 or HEVC twin.
    public func isTopH264(_ rung: PlannedRung) -> Bool { rung.codec == .h264 && rung == topRung }

    /// The rungs the fan-out graph feeds and an encoder encodes: the written ones but a
    /// passed-through top rung.
    public var encodedRungs: [PlannedRung] {
        writtenRungs.filter { !(passesTopRungThrough && isTopH264($0)) }
    }

    /// The sizes the fan-out graph scales to, largest last: one sink each, shared by every encoded
    /// rung of that size (an H.264 rung and its AV1 and HEVC twins are scaled once).
    public var fanOutSizes: [PlannedSize] {
        var sizes: [PlannedSize] = []
        for rung in encodedRungs.sorted(by: { $0.width * $0.height < $1.width * $1.height })
        where sizes.last.map({ $0.width != rung.width || $0.height != rung.height }) ?? true {
            sizes.append(PlannedSize(width: rung.width, height: rung.height))
        }
        return sizes
    }

    /// The fan-out sink that feeds `rung`.
    public func fanOutSink(of rung: PlannedRung) -> Int? {
        fanOutSizes.firstIndex { $0.width == rung.width && $0.height == rung.height }
    }

    /// The distinct sound bitrates of the ladder, lowest first: one AAC encode each, from one mix.
    public var audioBitratesKbps: [Int] { Array(Set(writtenRungs.map(\.audioBitrateKbps))).sorted() }
}
