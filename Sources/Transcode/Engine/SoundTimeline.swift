internal import CFFmpeg

/// Lays the clips' sound and the music on the video timeline, sample-exact.
///
/// This is where joined clips keep sync: each clip's sound is held back until its video has
/// reached it, then cut or padded with silence to exactly the clip's video length
/// (`frames × rate / frameRate` samples), so every join lands on the same instant in both
/// streams. The last clip's sound, which no join follows, goes to the mix as soon as it comes
/// (its reader runs it ahead of the video), so the mix's loudness lookahead is filled before
/// the video needs the sound; the mix is encoded only up to the video's end anyway. Music
/// follows the timeline too, one fade length behind, so the fade-out can end exactly where the
/// video ends.
final class SoundTimeline {
    private let plan: TranscodePlan
    private let mix: SoundMix
    private let music: MusicTrack?
    private let fadeSamples: Int64
    private let pending: AudioFIFO
    /// Timeline sample where the current clip starts, and how much of it has gone to the mix.
    private var clipStart: Int64 = 0
    private var clipForwarded: Int64 = 0
    private var clipHasSound = false
    /// The clip's sound may run ahead of its video (the last clip).
    private var clipLeads = false
    private var musicPushed: Int64 = 0

    init(plan: TranscodePlan, mix: SoundMix, music: MusicTrack?) {
        self.plan = plan
        self.mix = mix
        self.music = music
        fadeSamples = Int64(((plan.music?.fadeOutSeconds ?? 0) * Double(plan.audio.sampleRate)).rounded())
        pending = AudioFIFO(sampleRate: plan.audio.sampleRate, channels: plan.audio.channels)
    }

    /// Starts a clip at timeline frame `frame`; `hasSound`: it will deliver its own sound;
    /// `isLast`: no clip follows it, so its sound may run ahead of its video.
    func beginClip(atFrame frame: Int, hasSound: Bool, isLast: Bool) throws {
        clipStart = plan.samples(forFrames: frame)
        clipForwarded = 0
        clipHasSound = hasSound
        clipLeads = isLast
        try pending.drop()
    }

    /// Adds normalised clip sound (48 kHz stereo planar, position = time from the clip's start).
    func addClipSound(_ frame: Frame) throws {
        guard plan.audio.clipSound, clipHasSound else { return }
        try pending.write(frame)
    }

    /// The clip's video has reached `clipFrames` (and the timeline `timelineFrames`): forward what
    /// is now known to belong to the timeline.
    func advance(clipFrames: Int, timelineFrames: Int) throws {
        let known = clipLeads && clipHasSound ? Int64.max : plan.samples(forFrames: clipFrames)
        try forwardClipSound(upTo: known, padding: !clipHasSound)
        try feedMusic(upTo: plan.samples(forFrames: timelineFrames) - fadeSamples)
    }

    /// Ends the clip at `clipFrames`: its sound is cut there or padded with silence to it.
    func endClip(clipFrames: Int) throws {
        try forwardClipSound(upTo: plan.samples(forFrames: clipFrames), padding: true)
    }

    /// Ends the timeline at `frames`: the music's last `fadeOut` seconds fade to silence, and every
    /// mix input ends there.
    func finish(frames: Int) throws {
        let total = plan.samples(forFrames: frames)
        let fadeStart = max(musicPushed, total - fadeSamples)
        try feedMusic(upTo: fadeStart)
        if let music, total > fadeStart {
            let fade = try FilterGraph(
                description: plan.musicFadeFilter(samples: total - fadeStart),
                sources: [.planarStereo(sampleRate: plan.audio.sampleRate)],
                sinks: ["abuffersink"])
            var position = fadeStart
            while position < total {
                let chunk = try music.frame(at: position, count: total - position)
                chunk.pts = position - fadeStart
                try fade.push(chunk)
                position += Int64(chunk.sampleCount)
            }
            try fade.close(at: total - fadeStart)
            let faded = Frame()
            while try fade.pull(0, into: faded) == .ready {
                faded.pts += fadeStart
                try mix.pushMusic(faded)
            }
            musicPushed = total
        }
        // Every input runs one second of silence past the end before it closes, so no filter sees
        // an input end while another still has samples queued; the encode stops at `total` anyway.
        // The clip sound may already run past the end (the last clip's lead): its silence starts there.
        let end = total + Int64(plan.audio.sampleRate)
        let clipEnd = max(total, clipStart + clipForwarded)
        try pad(from: clipEnd, to: end + clipEnd - total, mix.pushClipSound)
        try pad(from: total, to: end, mix.pushMusic)
        try mix.closeInputs(at: end + clipEnd - total)
    }

    private func pad(from start: Int64, to end: Int64, _ push: (Frame) throws -> Void) throws {
        var position = start
        while position < end {
            let silence = try pending.silence(Int(min(4096, end - position)), pts: position)
            try push(silence)
            position += Int64(silence.sampleCount)
        }
    }

    private func forwardClipSound(upTo clipSamples: Int64, padding: Bool) throws {
        guard plan.audio.clipSound else { return }
        while clipForwarded < clipSamples {
            let wanted = Int(min(clipSamples - clipForwarded, 4096))
            let frame: Frame
            if pending.count > 0 {
                frame = try pending.read(wanted, pts: clipStart + clipForwarded)
            } else if padding {
                frame = try pending.silence(wanted, pts: clipStart + clipForwarded)
            } else {
                return
            }
            clipForwarded += Int64(frame.sampleCount)
            try mix.pushClipSound(frame)
        }
    }

    private func feedMusic(upTo samples: Int64) throws {
        guard let music else { return }
        while musicPushed < samples {
            let frame = try music.frame(at: musicPushed, count: samples - musicPushed)
            musicPushed += Int64(frame.sampleCount)
            try mix.pushMusic(frame)
        }
    }
}
