import Foundation

/// What a preset may say: every field checked, the failure naming its JSON path.
extension Preset {
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

}
