/// What a transcode will do, computed from a probe and a preset without touching FFmpeg.
///
/// The plan fixes every decision up front — ladder sizes, keyframe and segment positions, the
/// normalisation filter graph, thumbnail layout — so it can be tested as a value and recorded
/// in the output manifest.
public struct TranscodePlan: Sendable, Codable, Equatable {
    public var source: SourceProbe
    public var presetName: String
    public var presetHash: String
    /// Upright output picture size before scaling to rungs.
    public var displayWidth: Int
    public var displayHeight: Int
    /// Clockwise rotation applied to the decoded frames.
    public var rotation: Int
    /// Tone mapping applied, or `.sdr` when the source already is SDR.
    public var toneMapFrom: DynamicRange
    /// The source's YUV matrix (`bt601`, `bt709`, …); converted to BT.709 once, before the fan-out.
    public var sourceColorMatrix: String
    public var frameRate: Int
    public var gopFrames: Int
    public var rungs: [PlannedRung]
    public var audio: PlannedAudio
    public var posters: [PlannedSize]
    public var storyboard: PlannedStoryboard
    /// First frame index of each segment, for the estimated duration (more follow the same rule).
    public var segmentSeconds: Int
    public var initialSegmentSeconds: [Int]
    public var level: String
    public var encoderPreset: String
    public var maxDurationSeconds: Double

    public struct PlannedRung: Sendable, Codable, Equatable {
        public var name: String
        public var width: Int
        public var height: Int
        public var crf: Int
        public var maxrateKbps: Int
        public var bufsizeKbps: Int
    }

    public struct PlannedAudio: Sendable, Codable, Equatable {
        /// False when the source has no audio: a silent track is generated so every output has the same shape.
        public var fromSource: Bool
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

    /// The top rung, which also feeds the progressive MP4.
    public var topRung: PlannedRung { rungs[rungs.count - 1] }
}

extension TranscodePlan {
    /// Builds the plan, or throws the reason the source cannot be accepted under the preset's limits.
    public static func make(probe: SourceProbe, preset: Preset) throws -> TranscodePlan {
        guard let video = probe.video else { throw TranscodeError.noVideoStream(path: probe.path) }
        // Image demuxers (image2, png_pipe, jpeg_pipe, …) mean a picture, not a recording.
        if probe.container == "image2" || probe.container.hasSuffix("_pipe") {
            throw TranscodeError.stillImage(path: probe.path)
        }
        try checkLimits(probe: probe, video: video, limits: preset.limits)

        let width = video.displayWidth, height = video.displayHeight
        let rungs = ladder(width: width, height: height, rungs: preset.rungs)
        let top = rungs[rungs.count - 1]
        let posterSides = preset.thumbnails.posterShortSides.map { min($0, min(top.width, top.height)) }
        let posters = Array(Set(posterSides)).sorted().map { fit(width: width, height: height, shortSide: $0) }
        let cell = fit(width: width, height: height, shortSide: preset.thumbnails.storyboardShortSide)
        let interval = preset.thumbnails.storyboardIntervalSeconds
        let cells = max(1, Int((probe.durationSeconds / Double(interval)).rounded(.up)))
        let columns = min(preset.thumbnails.storyboardColumns, cells)

        return TranscodePlan(
            source: probe,
            presetName: preset.name,
            presetHash: preset.contentHash,
            displayWidth: width,
            displayHeight: height,
            rotation: video.rotation,
            toneMapFrom: video.dynamicRange,
            sourceColorMatrix: video.effectiveColorMatrix,
            frameRate: preset.video.frameRate,
            gopFrames: preset.video.frameRate * preset.video.gopSeconds,
            rungs: rungs,
            audio: PlannedAudio(fromSource: probe.audio != nil, sampleRate: preset.audio.sampleRate,
                                channels: preset.audio.channels, bitrateKbps: preset.audio.bitrateKbps,
                                loudnessLUFS: preset.audio.loudnessLUFS, truePeakDBTP: preset.audio.truePeakDBTP),
            posters: posters,
            storyboard: PlannedStoryboard(intervalSeconds: interval, cellWidth: cell.width, cellHeight: cell.height,
                                          columns: columns, rows: (cells + columns - 1) / columns),
            segmentSeconds: preset.video.segmentSeconds,
            initialSegmentSeconds: preset.video.initialSegmentSeconds,
            level: preset.video.level,
            encoderPreset: preset.video.encoderPreset,
            maxDurationSeconds: preset.limits.maxDurationSeconds
        )
    }

    static func checkLimits(probe: SourceProbe, video: VideoStreamInfo, limits: Preset.Limits) throws {
        func exceeded(_ limit: String, _ measured: String, _ allowed: String) -> TranscodeError {
            .limitExceeded(path: probe.path, limit: limit, measured: measured, allowed: allowed)
        }
        if probe.sizeBytes > limits.maxBytes {
            throw exceeded("size", "\(probe.sizeBytes) bytes", "\(limits.maxBytes) bytes")
        }
        if probe.durationSeconds > limits.maxDurationSeconds {
            throw exceeded("duration", String(format: "%.2f s", probe.durationSeconds), String(format: "%.0f s", limits.maxDurationSeconds))
        }
        if video.width * video.height > limits.maxPixels || video.width <= 0 || video.height <= 0 {
            throw exceeded("resolution", "\(video.width)x\(video.height)", "\(limits.maxPixels) pixels")
        }
        if video.frameRate > limits.maxFrameRate {
            throw exceeded("frame_rate", String(format: "%.1f fps", video.frameRate), String(format: "%.0f fps", limits.maxFrameRate))
        }
        if probe.streamCount > limits.maxStreams {
            throw exceeded("streams", "\(probe.streamCount) streams", "\(limits.maxStreams)")
        }
        if let audio = probe.audio, audio.channels > limits.maxAudioChannels {
            throw exceeded("audio_channels", "\(audio.channels) channels", "\(limits.maxAudioChannels)")
        }
    }

    /// The rungs for an upright `width`×`height` source: preset rungs up to the source's short
    /// side, plus one rung at the source's own size when it falls between two preset rungs and
    /// is at least 1.25× the rung below (a 362p source gets 360p only, a 540p one 360p + 540p). Never
    /// upscales; the lowest rung is always produced (at the source size when that is smaller).
    static func ladder(width: Int, height: Int, rungs: [Preset.Rung]) -> [PlannedRung] {
        let sourceShort = even(min(width, height))
        var planned: [PlannedRung] = []
        for rung in rungs {
            let short = min(rung.shortSide, sourceShort)
            // A rung at the source's own size only when it is clearly above the previous one.
            if let last = planned.last, Double(short) < Double(min(last.width, last.height)) * 1.25 { break }
            let size = fit(width: width, height: height, shortSide: short)
            let name = short == rung.shortSide ? rung.name : "\(short)p"
            planned.append(PlannedRung(name: name, width: size.width, height: size.height, crf: rung.crf,
                                       maxrateKbps: rung.maxrateKbps, bufsizeKbps: rung.bufsizeKbps))
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
        var start = 0
        for seconds in initialSegmentSeconds {
            if index == start { return true }
            start += seconds * frameRate
        }
        return index >= start && (index - start) % (segmentSeconds * frameRate) == 0
    }

    /// True when output frame `index` must be a keyframe.
    public func isKeyframe(frame index: Int) -> Bool { index % gopFrames == 0 }
}
