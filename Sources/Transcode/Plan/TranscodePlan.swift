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
