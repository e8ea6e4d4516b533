import Foundation

/// Everything an operator can tune about the output: the ladder, rate control, audio,
/// thumbnails and input limits. Loaded from JSON (see `Presets/default.json`); unknown or
/// invalid fields are rejected with their JSON path.
public struct Preset: Sendable, Codable, Equatable {
    public var name: String
    public var video: Video
    public var rungs: [Rung]
    public var audio: Audio
    public var thumbnails: Thumbnails
    public var limits: Limits
    /// The animated preview loop (absent from older presets: ``Preview/standard``).
    public var preview: Preview = .standard
    /// Renditions in other codecs beside the H.264 ladder (``CodecLadder``); absent: H.264 only.
    public var codecLadders: [CodecLadder]? = nil

    public struct Video: Sendable, Codable, Equatable {
        /// libx264 speed preset (`ultrafast` … `veryslow`).
        public var encoderPreset: String
        /// H.264 level as written in specs, e.g. `4.1`.
        public var level: String
        public var frameRate: Int
        /// Distance between forced IDR frames, identical in every rung.
        public var gopSeconds: Int
        /// Target segment duration (`#EXT-X-TARGETDURATION`).
        public var segmentSeconds: Int
        /// Shorter segments at the start, so playback begins quickly on slow links.
        public var initialSegmentSeconds: [Double]
        /// How a clip whose shape differs from the first clip's frame is made to fit it.
        public var clipFit: ClipFit
        /// Copy an upload's own H.264 as the top rung when it already meets it (``TopRungDecision``).
        public var passthrough: Bool
        /// How full the startup rung's rate buffer is at the start (x264 `vbv-init`, a fraction of
        /// `bufsizeKbps`): what its first frames may spend beyond the rate cap, so what a player on
        /// a slow link waits for before the first frame. The other rungs start as x264 does (0.9).
        public var initialBufferFill: Double

        public init(encoderPreset: String, level: String, frameRate: Int, gopSeconds: Int, segmentSeconds: Int,
                    initialSegmentSeconds: [Double], clipFit: ClipFit = .fit, passthrough: Bool = true,
                    initialBufferFill: Double = 0.25) {
            self.encoderPreset = encoderPreset
            self.level = level
            self.frameRate = frameRate
            self.gopSeconds = gopSeconds
            self.segmentSeconds = segmentSeconds
            self.initialSegmentSeconds = initialSegmentSeconds
            self.clipFit = clipFit
            self.passthrough = passthrough
            self.initialBufferFill = initialBufferFill
        }

        /// `clipFit`, `passthrough` and `initialBufferFill` may be absent (presets written before
        /// they existed): `fit`, true, 0.25.
        public init(from decoder: any Swift.Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            self.init(encoderPreset: try c.decode(String.self, forKey: .encoderPreset),
                      level: try c.decode(String.self, forKey: .level),
                      frameRate: try c.decode(Int.self, forKey: .frameRate),
                      gopSeconds: try c.decode(Int.self, forKey: .gopSeconds),
                      segmentSeconds: try c.decode(Int.self, forKey: .segmentSeconds),
                      initialSegmentSeconds: try c.decode([Double].self, forKey: .initialSegmentSeconds),
                      clipFit: try c.decodeIfPresent(ClipFit.self, forKey: .clipFit) ?? .fit,
                      passthrough: try c.decodeIfPresent(Bool.self, forKey: .passthrough) ?? true,
                      initialBufferFill: try c.decodeIfPresent(Double.self, forKey: .initialBufferFill) ?? 0.25)
        }
    }

    /// Fit policy for clips of another shape than the output frame (the first clip's).
    public enum ClipFit: String, Sendable, Codable, CaseIterable {
        /// Scale to fit inside the frame, black bars on the sides or top and bottom; nothing is cut.
        case fit
        /// Scale to cover the frame and crop the overflow, centred; no bars.
        case fill
    }

    /// What to do with an upload whose joined clips run longer than `limits.maxDurationSeconds`.
    public enum OverLength: String, Sendable, Codable, CaseIterable {
        /// Refuse it, naming the measured length and the limit.
        case reject
        /// Keep the first `maxDurationSeconds` and drop the rest.
        case trim
    }

    /// One rendition of the ladder, sized by its short side.
    public struct Rung: Sendable, Codable, Equatable {
        public var name: String
        public var shortSide: Int
        public var crf: Int
        public var maxrateKbps: Int
        public var bufsizeKbps: Int
        /// This rung's AAC bitrate (default `audio.bitrateKbps`): small rungs for slow links
        /// carry lighter sound, encoded from the same mix.
        public var audioBitrateKbps: Int?
        /// This rung's libx264 speed preset (default `video.encoderPreset`).
        public var encoderPreset: String?
        /// Extra libx264 options for this rung, `key=value` pairs joined by `:` (x264's own
        /// names, e.g. `b-adapt=0:rc-lookahead=10`). The keyframe grid, rate control and level
        /// are the engine's and cannot be set here.
        public var x264Params: String?

        public init(name: String, shortSide: Int, crf: Int, maxrateKbps: Int, bufsizeKbps: Int,
                    audioBitrateKbps: Int? = nil, encoderPreset: String? = nil, x264Params: String? = nil) {
            self.name = name
            self.shortSide = shortSide
            self.crf = crf
            self.maxrateKbps = maxrateKbps
            self.bufsizeKbps = bufsizeKbps
            self.audioBitrateKbps = audioBitrateKbps
            self.encoderPreset = encoderPreset
            self.x264Params = x264Params
        }

        /// The x264 option names the engine sets itself: the keyframe grid every rung shares, rate
        /// control from `crf`/`maxrateKbps`/`bufsizeKbps`, the level, the colour tags.
        static let engineX264Keys: Set<String> = [
            "keyint", "min-keyint", "keyint-min", "scenecut", "open-gop", "intra-refresh", "crf", "qp", "bitrate",
            "vbv-maxrate", "vbv-bufsize", "vbv-init", "level", "profile", "fps", "force-cfr", "pass", "stats",
            "input-csp", "output-csp", "input-depth", "output-depth", "colorprim", "transfer", "colormatrix",
            "range", "sar", "threads", "lookahead-threads", "sliced-threads", "frame-packing", "dump-yuv",
        ]
    }

    public struct Audio: Sendable, Codable, Equatable {
        public var bitrateKbps: Int
        public var sampleRate: Int
        public var channels: Int
        /// Integrated loudness target of the final mix (EBU R128 / `loudnorm`), or nil to leave levels alone.
        public var loudnessLUFS: Double?
        /// True-peak ceiling of the final mix, in dBTP.
        public var truePeakDBTP: Double

        private enum CodingKeys: String, CodingKey {
            case bitrateKbps, sampleRate, channels, loudnessLUFS, truePeakDBTP
        }

        /// Writes `loudnessLUFS: null` explicitly when normalisation is off, so the preset file says so.
        public func encode(to encoder: any Swift.Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(bitrateKbps, forKey: .bitrateKbps)
            try container.encode(sampleRate, forKey: .sampleRate)
            try container.encode(channels, forKey: .channels)
            try container.encode(loudnessLUFS, forKey: .loudnessLUFS)
            try container.encode(truePeakDBTP, forKey: .truePeakDBTP)
        }
    }

    public struct Thumbnails: Sendable, Codable, Equatable {
        /// Poster JPEG sizes by short side, smallest first.
        public var posterShortSides: [Int]
        public var storyboardIntervalSeconds: Int
        public var storyboardShortSide: Int
        public var storyboardColumns: Int
    }

    /// The animated WebP preview loop (`preview.webp`): the most active `seconds` of the video.
    public struct Preview: Sendable, Codable, Equatable {
        public var enabled: Bool
        public var seconds: Int
        public var fps: Int
        /// Short side of the loop, capped at the top rung's.
        public var shortSide: Int
        /// Hard limit on the file size: quality, then frame rate, give way to it.
        public var maxBytes: Int

        public static let standard = Preview(enabled: true, seconds: 3, fps: 12, shortSide: 240, maxBytes: 300_000)
    }

}

extension Preset {
    /// `preview` may be absent (presets written before it existed): ``Preview/standard``.
    public init(from decoder: any Swift.Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(name: try c.decode(String.self, forKey: .name), video: try c.decode(Video.self, forKey: .video),
                  rungs: try c.decode([Rung].self, forKey: .rungs), audio: try c.decode(Audio.self, forKey: .audio),
                  thumbnails: try c.decode(Thumbnails.self, forKey: .thumbnails), limits: try c.decode(Limits.self, forKey: .limits),
                  preview: try c.decodeIfPresent(Preview.self, forKey: .preview) ?? .standard,
                  codecLadders: try c.decodeIfPresent([CodecLadder].self, forKey: .codecLadders))
    }
}
