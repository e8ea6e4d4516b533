import Foundation

/// How a preset is found, read and written: by name or path, strictly decoded and validated,
/// as canonical JSON and its hash.
extension Preset {
    /// The built-in ladder; `Presets/default.json` is this value written out.
    public static let builtIn = Preset(
        name: "default",
        video: Video(encoderPreset: "veryfast", level: "4.1", frameRate: 30, gopSeconds: 1,
                     segmentSeconds: 1, initialSegmentSeconds: [0.5, 0.5], initialBufferFill: 0.1),
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
