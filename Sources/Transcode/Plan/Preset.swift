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

    /// Limits checked against the probe before decoding, and against decoded time while decoding.
    public struct Limits: Sendable, Codable, Equatable {
        public var maxBytes: Int64
        public var maxDurationSeconds: Double
        public var maxPixels: Int
        public var maxFrameRate: Double
        public var maxStreams: Int
        public var maxAudioChannels: Int
        /// Most clips one upload may join.
        public var maxClips: Int
        public var overLength: OverLength
        /// Longest sound track (music) file accepted, in seconds.
        public var maxSoundTrackSeconds: Double

        /// Highest audio sample rate accepted from any input.
        public static let maxSampleRate = 384_000
        /// Bound on every time an upload or a preset may state (a day), checked before arithmetic.
        public static let longestSeconds = 86_400.0

        public init(maxBytes: Int64, maxDurationSeconds: Double, maxPixels: Int, maxFrameRate: Double, maxStreams: Int,
                    maxAudioChannels: Int, maxClips: Int = 20, overLength: OverLength = .reject,
                    maxSoundTrackSeconds: Double = 900) {
            self.maxBytes = maxBytes
            self.maxDurationSeconds = maxDurationSeconds
            self.maxPixels = maxPixels
            self.maxFrameRate = maxFrameRate
            self.maxStreams = maxStreams
            self.maxAudioChannels = maxAudioChannels
            self.maxClips = maxClips
            self.overLength = overLength
            self.maxSoundTrackSeconds = maxSoundTrackSeconds
        }

        /// `maxClips`, `overLength` and `maxSoundTrackSeconds` may be absent (older presets): 20, `reject`, 900.
        public init(from decoder: any Swift.Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            self.init(maxBytes: try c.decode(Int64.self, forKey: .maxBytes),
                      maxDurationSeconds: try c.decode(Double.self, forKey: .maxDurationSeconds),
                      maxPixels: try c.decode(Int.self, forKey: .maxPixels),
                      maxFrameRate: try c.decode(Double.self, forKey: .maxFrameRate),
                      maxStreams: try c.decode(Int.self, forKey: .maxStreams),
                      maxAudioChannels: try c.decode(Int.self, forKey: .maxAudioChannels),
                      maxClips: try c.decodeIfPresent(Int.self, forKey: .maxClips) ?? 20,
                      overLength: try c.decodeIfPresent(OverLength.self, forKey: .overLength) ?? .reject,
                      maxSoundTrackSeconds: try c.decodeIfPresent(Double.self, forKey: .maxSoundTrackSeconds) ?? 900)
        }
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

    /// The built-in ladder; `Presets/default.json` is this value written out.
    public static let builtIn = Preset(
        name: "default",
        video: Video(encoderPreset: "veryfast", level: "4.1", frameRate: 30, gopSeconds: 2,
                     segmentSeconds: 6, initialSegmentSeconds: [0.5, 1, 2.5], initialBufferFill: 0.1),
        // The bottom two are cellular-safe (Apple's authoring spec: 145 kbit/s at 416×234,
        // 365 kbit/s at 640×360), with lighter sound; players start on the first one listed.
        rungs: [
            Rung(name: "234p", shortSide: 234, crf: 28, maxrateKbps: 160, bufsizeKbps: 160, audioBitrateKbps: 32),
            Rung(name: "360p", shortSide: 360, crf: 26, maxrateKbps: 500, bufsizeKbps: 750, audioBitrateKbps: 64),
            Rung(name: "720p", shortSide: 720, crf: 24, maxrateKbps: 3000, bufsizeKbps: 6000),
            Rung(name: "1080p", shortSide: 1080, crf: 23, maxrateKbps: 6000, bufsizeKbps: 12000, x264Params: "b-adapt=0"),
        ],
        // Per-rung x264 settings, from `make bench-levers` (Benchmarks/levers.py, #33: the shipped
        // samples, ../shared/media and two 20 s 1080×1920 camera originals; docs/BENCHMARKS.md):
        // - 1080p `b-adapt=0` (always veryfast's 3 B-frames): at most 1.000× the bytes on every
        //   source, SSIM −0.0001…+0.0017 (+0.0017 on the grainy camera original, at its rate cap).
        //   On 720p it cost up to 1.04× the bytes, on 234p 1.08× and −0.004 SSIM: not there.
        // - veryfast kept on 234p/360p: faster/fast/medium spent 1.04–1.15× the bytes (median) for
        //   +0.003…+0.010 SSIM at 1.3–2.3× the rung's CPU. `rc-lookahead=5` lost up to 0.019 SSIM
        //   (234p); `superfast` on 1080p 1.47× the bytes (median), −0.0035 SSIM at worst.
        audio: Audio(bitrateKbps: 128, sampleRate: 48000, channels: 2, loudnessLUFS: -14, truePeakDBTP: -1),
        thumbnails: Thumbnails(posterShortSides: [240, 480, 720], storyboardIntervalSeconds: 1,
                               storyboardShortSide: 90, storyboardColumns: 10),
        limits: Limits(maxBytes: 50 * 1024 * 1024, maxDurationSeconds: 60, maxPixels: 4096 * 4096,
                       maxFrameRate: 240, maxStreams: 16, maxAudioChannels: 8)
    )

    /// libx264's speed presets, fastest first.
    static let encoderSpeeds = ["ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow", "slower", "veryslow"]

    /// Why `params` cannot be a rung's `x264Params`, or nil: `key=value` pairs joined by `:`, names
    /// of lower-case letters, digits and `-`, values of letters, digits, `.`, `,`, `-` and `_` (so
    /// nothing can break out of the option string), no option the engine sets itself.
    static func x264ParamsProblem(_ params: String) -> String? {
        guard params.utf8.count <= 256 else { return "at most 256 characters" }
        for pair in params.split(separator: ":", omittingEmptySubsequences: false) {
            let parts = pair.split(separator: "=", omittingEmptySubsequences: false)
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty,
                  parts[0].allSatisfy({ ($0.isASCII && ($0.isLowercase || $0.isNumber)) || $0 == "-" }),
                  parts[1].allSatisfy({ ($0.isASCII && ($0.isLetter || $0.isNumber)) || ".,-_".contains($0) }) else {
                return "must be key=value pairs joined by ':' (x264 option names; values of letters, digits, '.', ',', '-', '_'), not '\(pair)'"
            }
            if Rung.engineX264Keys.contains(String(parts[0])) { return "'\(parts[0])' is set by the engine (keyframe grid, rate control, level, colour), not by the preset" }
        }
        return nil
    }

    /// Whether `--preset` names a file (has a `/` or ends in `.json`) rather than a preset name.
    public static func isPath(_ nameOrPath: String) -> Bool {
        nameOrPath.contains("/") || nameOrPath.hasSuffix(".json")
    }

    /// The files `nameOrPath` may name, in lookup order: itself when it is a path (has a `/` or
    /// ends in `.json`), else `NAME.json` in each of `searchDirectories`.
    public static func candidatePaths(_ nameOrPath: String, searchDirectories: [String]) -> [String] {
        isPath(nameOrPath) ? [nameOrPath]
            : searchDirectories.map { "\($0)/\(nameOrPath).json" }
    }

    /// Loads a preset: `default` (built in), a name in `searchDirectories` (`NAME.json`), or a path.
    public static func load(_ nameOrPath: String, searchDirectories: [String] = []) throws -> Preset {
        if nameOrPath == "default" { return builtIn }
        let candidates = candidatePaths(nameOrPath, searchDirectories: searchDirectories)
        guard let path = candidates.first(where: { FileManager.default.fileExists(atPath: $0) }) else {
            throw TranscodeError.badPreset(source: nameOrPath, field: "(file)", reason: "no such preset (looked in \(candidates.joined(separator: ", ")))")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw TranscodeError.badPreset(source: path, field: "(file)", reason: "unreadable")
        }
        return try decode(data, source: path)
    }

    /// Decodes and validates preset JSON; errors name the offending field.
    public static func decode(_ data: Data, source: String) throws -> Preset {
        let preset: Preset
        do {
            preset = try StrictJSON.decode(Preset.self, from: data)
        } catch let error as StrictJSON.UnknownField {
            throw TranscodeError.badPreset(source: source, field: error.path, reason: "unknown field")
        } catch let error as DecodingError {
            let (field, reason) = StrictJSON.explain(error)
            throw TranscodeError.badPreset(source: source, field: field, reason: reason)
        }
        try preset.validate(source: source)
        return preset
    }

    func validate(source: String) throws {
        func fail(_ field: String, _ reason: String) -> TranscodeError {
            .badPreset(source: source, field: field, reason: reason)
        }
        let speeds = Self.encoderSpeeds
        guard speeds.contains(video.encoderPreset) else { throw fail("video.encoderPreset", "must be one of \(speeds.joined(separator: ", "))") }
        guard ["3.0", "3.1", "4.0", "4.1", "4.2", "5.0", "5.1", "5.2"].contains(video.level) else { throw fail("video.level", "must be an H.264 level between 3.0 and 5.2") }
        guard (1...60).contains(video.frameRate) else { throw fail("video.frameRate", "must be 1...60") }
        guard (1...10).contains(video.gopSeconds) else { throw fail("video.gopSeconds", "must be 1...10") }
        guard video.segmentSeconds >= video.gopSeconds, video.segmentSeconds <= 60, video.segmentSeconds % video.gopSeconds == 0 else {
            throw fail("video.segmentSeconds", "must be a multiple of gopSeconds (\(video.gopSeconds)) up to 60")
        }
        guard video.initialBufferFill >= 0.05, video.initialBufferFill <= 1 else {
            throw fail("video.initialBufferFill", "must be 0.05...1 (a fraction of the startup rung's bufsizeKbps)")
        }
        guard video.initialSegmentSeconds.count <= 10 else { throw fail("video.initialSegmentSeconds", "at most 10 entries") }
        for (index, seconds) in video.initialSegmentSeconds.enumerated() {
            let frames = seconds * Double(video.frameRate)
            guard seconds >= 0.1, seconds <= Double(video.segmentSeconds), abs(frames - frames.rounded()) < 1e-6 else {
                throw fail("video.initialSegmentSeconds[\(index)]",
                           "must be 0.1 s to segmentSeconds and a whole number of frames (each segment starts with a keyframe)")
            }
        }
        guard (1...10).contains(rungs.count) else { throw fail("rungs", "1 to 10 rungs are required") }
        for (index, rung) in rungs.enumerated() {
            let field = "rungs[\(index)]"
            guard !rung.name.isEmpty, rung.name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" }) else {
                throw fail("\(field).name", "must be a non-empty file-name-safe word")
            }
            guard rung.shortSide >= 144, rung.shortSide <= 2160, rung.shortSide % 2 == 0 else { throw fail("\(field).shortSide", "must be even and in 144...2160") }
            guard (0...51).contains(rung.crf) else { throw fail("\(field).crf", "must be 0...51") }
            guard (1...1_000_000).contains(rung.maxrateKbps) else { throw fail("\(field).maxrateKbps", "must be 1...1000000") }
            guard rung.bufsizeKbps >= rung.maxrateKbps / 2, rung.bufsizeKbps <= 2_000_000 else {
                throw fail("\(field).bufsizeKbps", "must be at least half of maxrateKbps and at most 2000000")
            }
            if let kbps = rung.audioBitrateKbps, !(32...320).contains(kbps) { throw fail("\(field).audioBitrateKbps", "must be 32...320") }
            if let speed = rung.encoderPreset, !speeds.contains(speed) {
                throw fail("\(field).encoderPreset", "must be one of \(speeds.joined(separator: ", "))")
            }
            if let params = rung.x264Params, let reason = Self.x264ParamsProblem(params) { throw fail("\(field).x264Params", reason) }
            if index > 0, rung.shortSide <= rungs[index - 1].shortSide {
                throw fail("\(field).shortSide", "rungs must be ordered by increasing shortSide")
            }
        }
        guard Set(rungs.map(\.name)).count == rungs.count else { throw fail("rungs", "rung names must be unique") }
        guard (32...320).contains(audio.bitrateKbps) else { throw fail("audio.bitrateKbps", "must be 32...320") }
        guard [44100, 48000].contains(audio.sampleRate) else { throw fail("audio.sampleRate", "must be 44100 or 48000") }
        guard audio.channels == 2 else { throw fail("audio.channels", "must be 2 (stereo AAC-LC)") }
        if let target = audio.loudnessLUFS, !(-70...(-5)).contains(target) { throw fail("audio.loudnessLUFS", "must be -70...-5 (or null for no normalisation)") }
        guard (-9...0).contains(audio.truePeakDBTP) else { throw fail("audio.truePeakDBTP", "must be -9...0") }
        guard (1...10).contains(thumbnails.posterShortSides.count),
              thumbnails.posterShortSides.allSatisfy({ $0 >= 32 && $0 <= 4320 && $0 % 2 == 0 }) else {
            throw fail("thumbnails.posterShortSides", "needs 1 to 10 even sizes in 32...4320")
        }
        guard (1...3600).contains(thumbnails.storyboardIntervalSeconds) else { throw fail("thumbnails.storyboardIntervalSeconds", "must be 1...3600") }
        guard (16...1080).contains(thumbnails.storyboardShortSide), thumbnails.storyboardShortSide % 2 == 0 else { throw fail("thumbnails.storyboardShortSide", "must be even and in 16...1080") }
        guard (1...32).contains(thumbnails.storyboardColumns) else { throw fail("thumbnails.storyboardColumns", "must be 1...32") }
        // Upper bounds keep every later product and conversion in range (no trap on a preset value).
        guard (1...(1 << 40)).contains(limits.maxBytes) else { throw fail("limits.maxBytes", "must be 1...1099511627776 (1 TiB)") }
        guard limits.maxDurationSeconds > 0, limits.maxDurationSeconds <= Limits.longestSeconds else {
            throw fail("limits.maxDurationSeconds", "must be in (0, \(Int(Limits.longestSeconds))]")
        }
        guard (1...(16384 * 16384)).contains(limits.maxPixels) else { throw fail("limits.maxPixels", "must be 1...268435456") }
        guard limits.maxFrameRate > 0, limits.maxFrameRate <= 1000 else { throw fail("limits.maxFrameRate", "must be in (0, 1000]") }
        guard (1...1024).contains(limits.maxStreams) else { throw fail("limits.maxStreams", "must be 1...1024") }
        guard (1...64).contains(limits.maxAudioChannels) else { throw fail("limits.maxAudioChannels", "must be 1...64") }
        guard limits.maxSoundTrackSeconds > 0, limits.maxSoundTrackSeconds <= Limits.longestSeconds else {
            throw fail("limits.maxSoundTrackSeconds", "must be in (0, \(Int(Limits.longestSeconds))]")
        }
        guard (1...100).contains(limits.maxClips) else { throw fail("limits.maxClips", "must be 1...100") }
        guard (1...10).contains(preview.seconds) else { throw fail("preview.seconds", "must be 1...10") }
        guard (1...30).contains(preview.fps) else { throw fail("preview.fps", "must be 1...30") }
        guard (32...720).contains(preview.shortSide), preview.shortSide % 2 == 0 else { throw fail("preview.shortSide", "must be even and in 32...720") }
        guard (10_000...50_000_000).contains(preview.maxBytes) else { throw fail("preview.maxBytes", "must be 10000...50000000") }
        var codecs = Set<VideoCodec>()
        for (index, ladder) in (codecLadders ?? []).enumerated() {
            if let problem = ladder.problem(h264: rungs, field: "codecLadders[\(index)]") { throw fail(problem.field, problem.reason) }
            guard codecs.insert(ladder.codec).inserted else { throw fail("codecLadders[\(index)].codec", "\(ladder.codec.rawValue) appears twice") }
        }
    }

    /// Canonical JSON (sorted keys), as written to `Presets/` and hashed.
    public func canonicalJSON() -> Data {
        (try? JSONEncoder.ingestd.encode(self)) ?? Data()
    }

    /// A content hash of the canonical JSON (FNV-1a 64, hex): equal presets, equal hashes. The
    /// codec ladders' `note`s (for people) are left out: editing one re-encodes nothing.
    public var contentHash: String {
        var hashed = self
        hashed.codecLadders = codecLadders?.map { ladder in
            var ladder = ladder
            ladder.note = nil
            return ladder
        }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in hashed.canonicalJSON() {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return String(format: "%016llx", hash)
    }
}
