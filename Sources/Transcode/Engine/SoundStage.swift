/// The sound of the one pass, as a stage of its own. The timeline feeds it (where each clip
/// starts and ends, each clip's decoded sound, how far the video has got); it lays the sound on
/// the timeline (``SoundTimeline``, with the sound track from ``MusicTrack``), mixes and encodes
/// it (``SoundMix``) and hands the AAC packets on to the rungs' muxers, never ahead of the video
/// encoded so far, so the muxers interleave. Nothing flows back.
final class SoundStage {
    private let plan: TranscodePlan
    private let mix: SoundMix
    private let timeline: SoundTimeline

    /// Opens the mix and its encoders, and reads the sound track when the plan has one.
    init(plan: TranscodePlan, musicFile: SourceFile?) throws {
        self.plan = plan
        mix = try SoundMix(plan: plan)
        var music: MusicTrack?
        if let planned = plan.music, let musicFile { music = try MusicTrack(music: planned, file: musicFile, plan: plan) }
        timeline = SoundTimeline(plan: plan, mix: mix, music: music)
    }

    /// The AAC encoder of `kbps`, whose stream each rung carrying that bitrate adds to its muxers.
    func encoder(kbps: Int) -> Encoder { mix.encoders[kbps]! }

    /// Where the packets go, once the rungs exist.
    func connect(_ rungs: [RungEncoder]) { mix.downstream = rungs }

    /// Seconds of sound encoded.
    var secondsOut: Double { mix.secondsOut }

    /// A clip starts at timeline frame `frame`; `hasSound`: it will deliver its own sound;
    /// `isLast`: no clip follows it (its sound may run ahead of its video).
    func beginClip(atFrame frame: Int, hasSound: Bool, isLast: Bool) throws {
        try timeline.beginClip(atFrame: frame, hasSound: hasSound, isLast: isLast)
    }

    /// The clip's decoded, normalised sound; its video has reached `clipFrames` (`timelineFrames` in all).
    func clipSound(_ frame: Frame, clipFrames: Int, timelineFrames: Int) throws {
        try timeline.addClipSound(frame)
        try timeline.advance(clipFrames: clipFrames, timelineFrames: timelineFrames)
    }

    /// The timeline took a frame: the clip's video has reached `clipFrames` (`timelineFrames` in all).
    func videoAppended(clipFrames: Int, timelineFrames: Int) throws {
        try timeline.advance(clipFrames: clipFrames, timelineFrames: timelineFrames)
    }

    /// The rungs have been handed `frames` video frames: sound may be encoded up to that instant.
    func videoEncoded(frames: Int) throws {
        try mix.encode(upTo: Double(frames) / Double(plan.frameRate), exact: false)
    }

    /// The clip ends at `clipFrames`: its sound is cut there or padded with silence to it.
    func endClip(clipFrames: Int) throws {
        try timeline.endClip(clipFrames: clipFrames)
    }

    /// The timeline ends at `frames`: the sound is finished, encoded to exactly that length and drained.
    func finish(frames: Int) throws {
        try timeline.finish(frames: frames)
        try mix.encode(upTo: Double(frames) / Double(plan.frameRate), exact: true)
        try mix.finish()
    }
}
