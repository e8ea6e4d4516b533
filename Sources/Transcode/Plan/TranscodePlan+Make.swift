import Foundation

/// How a plan is made from the probes and the preset, step by step: the upload admitted, the
/// output frame chosen, the clips placed on one timeline, the ladder and thumbnails sized.
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
        let uploadPath = clips.count == 1 ? probes[0].path : directory(of: probes[0].path)
        let videos = try admitVideos(clips: clips, probes: probes, admission: admission, upload: uploadPath)
        try checkTimes(clips + (music.map { [ClipSource(path: $0.path, startSeconds: $0.offsetSeconds)] } ?? []))
        if let musicProbe { try checkSoundTrack(musicProbe, music: music, admission: admission) }
        try admission.checkSize(probes.reduce(musicProbe?.sizeBytes ?? 0) { $0 + $1.sizeBytes }, upload: uploadPath)

        let (width, height) = frame(first: videos[0], clips: clips.count, topShortSide: preset.rungs[preset.rungs.count - 1].shortSide)
        let clipSound = music?.mode != .replace && probes.contains { $0.audio != nil }
        let planned = try place(clips, probes: probes, videos: videos, frameRate: preset.video.frameRate, clipSound: clipSound)
        let estimated = try admission.admitDuration(estimated: planned.reduce(0) { $0 + $1.estimatedSeconds },
                                                    clips: clips.count, upload: uploadPath)
        var rungs = ladder(width: width, height: height, rungs: preset.rungs, audioKbps: preset.audio.bitrateKbps)
        rungs[0].initialBufferFill = preset.video.initialBufferFill
        let decision = TopRungDecision.decide(clips: planned, top: rungs[rungs.count - 1], rungCount: rungs.count, preset: preset)
        let pictures = thumbnails(preset, width: width, height: height, top: rungs[rungs.count - 1], seconds: estimated)
        var plan = TranscodePlan(
            clips: planned, music: plannedMusic(music, probe: musicProbe), presetName: preset.name, presetHash: preset.contentHash,
            displayWidth: width, displayHeight: height, clipFit: preset.video.clipFit, frameRate: preset.video.frameRate,
            // x264's own keyframe interval never adds an IDR between the upload's.
            gopFrames: decision.idrInterval ?? preset.video.frameRate * preset.video.gopSeconds,
            rungs: rungs, audio: audio(preset.audio, clipSound: clipSound), posters: pictures.posters,
            storyboard: pictures.storyboard, preview: pictures.preview,
            segmentSeconds: preset.video.segmentSeconds, initialSegmentSeconds: preset.video.initialSegmentSeconds,
            level: preset.video.level, encoderPreset: preset.video.encoderPreset, admission: admission, estimatedSeconds: estimated,
            topRungDecision: decision, segmentStartFrames: segmentStarts(decision, clips: planned, preset: preset))
        plan.codecRungs = codecRungs(preset.codecLadders ?? [], h264: rungs, presetRungs: preset.rungs)
        return plan
    }

    /// Each clip's video stream, once the clip count and each stream pass the limits; a
    /// picture (an image demuxer) is not a recording.
    private static func admitVideos(clips: [ClipSource], probes: [SourceProbe], admission: Admission,
                                    upload: String) throws -> [VideoStreamInfo] {
        try admission.checkClipCount(clips.count, upload: upload)
        return try probes.map { probe in
            guard let video = probe.video else { throw TranscodeError.noVideoStream(path: probe.path) }
            if probe.container == "image2" || probe.container.hasSuffix("_pipe") { throw TranscodeError.stillImage(path: probe.path) }
            try admission.check(video: video, in: probe)
            return video
        }
    }

    /// Every trim time and offset, checked before any arithmetic: no number from an upload can
    /// trap a conversion.
    private static func checkTimes(_ sources: [ClipSource]) throws {
        for clip in sources {
            let seconds = [clip.startSeconds, clip.endSeconds ?? 0]
            guard seconds.allSatisfy({ $0.isFinite && $0 >= 0 && $0 <= Preset.Limits.longestSeconds }) else {
                throw TranscodeError.badTrim(path: clip.path, detail: "times must be 0...\(Int(Preset.Limits.longestSeconds)) s")
            }
        }
    }

    /// The sound track within its limits, its offset before its end.
    private static func checkSoundTrack(_ probe: SourceProbe, music: MusicSource?, admission: Admission) throws {
        try admission.checkSoundTrack(probe)
        if let music, probe.durationSeconds > 0, music.offsetSeconds >= probe.durationSeconds {
            throw TranscodeError.badTrim(path: probe.path, detail: String(
                format: "offset %.3f s is at or past the end of the track (%.3f s)", music.offsetSeconds, probe.durationSeconds))
        }
    }

    /// The output frame. A single clip keeps its shape; joined clips share one: 9:16 (16:9 when
    /// the first clip is landscape), as large as the first clip's short side allows, capped at
    /// the top rung.
    private static func frame(first: VideoStreamInfo, clips: Int, topShortSide: Int) -> (width: Int, height: Int) {
        guard clips > 1 else { return (first.displayWidth, first.displayHeight) }
        let short = even(min(min(first.displayWidth, first.displayHeight), topShortSide))
        let long = Int((Double(short) * 8 / 9).rounded()) * 2  // 16:9, nearest even
        return first.displayWidth > first.displayHeight ? (long, short) : (short, long)
    }

    /// The clips on the output timeline, each trimmed (a start past its end is refused) and told
    /// how to normalise.
    private static func place(_ clips: [ClipSource], probes: [SourceProbe], videos: [VideoStreamInfo], frameRate: Int,
                              clipSound: Bool) throws -> [PlannedClip] {
        try zip(clips, zip(probes, videos)).map { clip, source in
            let (probe, video) = source
            let known = probe.durationSeconds
            if known > 0, clip.startSeconds >= known {
                throw TranscodeError.badTrim(path: probe.path, detail: String(
                    format: "start %.3f s is at or past the end of the clip (%.3f s)", clip.startSeconds, known))
            }
            let end = known > 0 ? min(clip.endSeconds ?? known, known) : (clip.endSeconds ?? 0)
            return PlannedClip(
                source: probe,
                startFrame: Int((clip.startSeconds * Double(frameRate)).rounded()),
                endFrame: clip.endSeconds.map { Int(($0 * Double(frameRate)).rounded()) },
                rotation: video.rotation,
                toneMapFrom: video.dynamicRange,
                sourceColorMatrix: video.effectiveColorMatrix,
                reachesFanOutFullRange: clips.count == 1 && video.dynamicRange == .sdr && video.isFullRange,
                conform: clips.count > 1,
                usesSound: clipSound && probe.audio != nil,
                estimatedSeconds: max(0, end - clip.startSeconds))
        }
    }

    /// The sound track as the plan carries it, when the upload has one (and its probe).
    private static func plannedMusic(_ music: MusicSource?, probe: SourceProbe?) -> PlannedMusic? {
        guard let music, let probe else { return nil }
        return PlannedMusic(source: probe, offsetSeconds: music.offsetSeconds, mode: music.mode, clipGainDB: music.clipGainDB,
                            musicGainDB: music.musicGainDB, loop: music.loop, fadeOutSeconds: music.fadeOutSeconds)
    }

    /// The output sound: the preset's settings, with or without the clips' own sound.
    private static func audio(_ audio: Preset.Audio, clipSound: Bool) -> PlannedAudio {
        PlannedAudio(clipSound: clipSound, sampleRate: audio.sampleRate, channels: audio.channels, bitrateKbps: audio.bitrateKbps,
                     loudnessLUFS: audio.loudnessLUFS, truePeakDBTP: audio.truePeakDBTP)
    }

    /// The upload's own segment starts, when its top rung is passed through.
    private static func segmentStarts(_ decision: TopRungDecision, clips: [PlannedClip], preset: Preset) -> [Int]? {
        decision.idrFrames.map {
            TopRungDecision.segmentStarts(idrFrames: $0, frames: clips[0].source.video?.packets?.frames ?? 0,
                                          initial: preset.video.initialSegmentSeconds,
                                          target: preset.video.segmentSeconds, frameRate: preset.video.frameRate)
        }
    }

    /// Posters (never larger than the top rung), the storyboard's cells for `seconds` of video,
    /// and the animated preview.
    private static func thumbnails(_ preset: Preset, width: Int, height: Int, top: PlannedRung,
                                   seconds: Double) -> (posters: [PlannedSize], storyboard: PlannedStoryboard, preview: PlannedPreview?) {
        let thumbnails = preset.thumbnails
        let posterSides = thumbnails.posterShortSides.map { min($0, min(top.width, top.height)) }
        let posters = Array(Set(posterSides)).sorted().map { fit(width: width, height: height, shortSide: $0) }
        let cell = fit(width: width, height: height, shortSide: thumbnails.storyboardShortSide)
        let cells = max(1, Int((seconds / Double(thumbnails.storyboardIntervalSeconds)).rounded(.up)))
        let columns = min(thumbnails.storyboardColumns, cells)
        let storyboard = PlannedStoryboard(intervalSeconds: thumbnails.storyboardIntervalSeconds, cellWidth: cell.width,
                                           cellHeight: cell.height, columns: columns, rows: (cells + columns - 1) / columns)
        let settings = preset.preview
        let size = fit(width: top.width, height: top.height, shortSide: min(settings.shortSide, min(top.width, top.height)))
        let preview = settings.enabled ? PlannedPreview(width: size.width, height: size.height, fps: settings.fps,
                                                        frames: settings.seconds * settings.fps, maxBytes: settings.maxBytes) : nil
        return (posters, storyboard, preview)
    }

    /// The directory holding `path` (`.` for a bare name): what names a many-clip upload.
    private static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
