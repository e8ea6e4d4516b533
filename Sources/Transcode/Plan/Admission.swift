import Foundation

/// Every limit an upload must meet (the preset's `limits`), each defined and checked here only,
/// at three moments:
///
/// - **On disk**, before anything is opened (the spool, `submit`): ``sizeRefusal(file:bytes:)``,
///   ``sizeRefusal(directory:bytes:manifestAllowance:)``, ``maxUploadFiles``.
/// - **From the manifest**, before a clip is opened: ``clipCountRefusal(_:)``.
/// - **From the headers**, while planning: ``checkClipCount(_:upload:)``,
///   ``checkSize(_:upload:)``, ``check(video:in:)``, ``check(audio:in:)``,
///   ``checkSoundTrack(_:)``, ``admitDuration(estimated:clips:upload:)``.
/// - **Decoded**, while transcoding, since headers can lie: ``checkDecodedPicture(width:height:path:)``
///   and ``admitFrame(after:frameRate:path:clips:)``.
///
/// A refusal is ``TranscodeError/limitExceeded(path:limit:measured:allowed:)`` (code `too_large`,
/// `too_long` or `limit_<name>`), naming the file, the measured value and the limit.
public struct Admission: Sendable, Codable, Equatable {
    public var limits: Preset.Limits

    public init(limits: Preset.Limits) { self.limits = limits }

    private func exceeded(_ path: String, _ limit: String, _ measured: String, _ allowed: String) -> TranscodeError {
        .limitExceeded(path: path, limit: limit, measured: measured, allowed: allowed)
    }

    // MARK: On disk

    /// Most files one upload may have, wherever it arrives (a directory, a bucket prefix, a
    /// tus upload set): the clips the preset allows, a sound track, ``maxCaptionFiles`` caption
    /// files and `upload.json`.
    public var maxUploadFiles: Int { limits.maxClips + 2 + Self.maxCaptionFiles }

    /// Most caption files one upload may name (whole-video and per-clip tracks together).
    public static let maxCaptionFiles = 32
    /// Most caption languages one video may have.
    public static let maxCaptionLanguages = 8

    /// Why a single-file upload of `bytes` is refused (`too_large`), or nil.
    public func sizeRefusal(file path: String, bytes: Int64) -> String? {
        fits(bytes: bytes) ? nil : "\(path): size \(bytes) bytes exceeds the limit of \(limits.maxBytes) bytes"
    }

    /// Why an upload directory holding `bytes` is refused (`too_large`), or nil. Its manifest may
    /// add `manifestAllowance` bytes to the media's limit; `nil` bytes: more than ``maxUploadFiles``.
    public func sizeRefusal(directory path: String, bytes: Int64?, manifestAllowance: Int) -> String? {
        guard let bytes else { return "\(path): more than \(maxUploadFiles) files in one upload" }
        guard !fits(bytes: bytes, manifestAllowance: manifestAllowance) else { return nil }
        return "\(path): upload directory holds \(bytes) bytes, over the limit of \(limits.maxBytes) bytes"
    }

    /// Whether `bytes` on disk (media plus up to `manifestAllowance` of manifest) are within the limit.
    public func fits(bytes: Int64, manifestAllowance: Int = 0) -> Bool {
        bytes <= limits.maxBytes + Int64(manifestAllowance)
    }

    // MARK: From the headers

    public func checkClipCount(_ count: Int, upload path: String) throws {
        if !fits(clips: count) { throw exceeded(path, "clips", "\(count) clips", "\(limits.maxClips)") }
    }

    /// Why a manifest listing `count` clips is refused before any clip is opened, or nil.
    public func clipCountRefusal(_ count: Int) -> String? {
        fits(clips: count) ? nil : "\(count) clips exceed the limit of \(limits.maxClips)"
    }

    private func fits(clips count: Int) -> Bool { count <= limits.maxClips }

    /// The media's bytes as probed (every clip and the sound track).
    public func checkSize(_ bytes: Int64, upload path: String) throws {
        if !fits(bytes: bytes) { throw exceeded(path, "size", "\(bytes) bytes", "\(limits.maxBytes) bytes") }
    }

    /// A clip's picture, frame rate and streams (and its sound, when it has one).
    public func check(video: VideoStreamInfo, in probe: SourceProbe) throws {
        if !fits(pixels: video.width * video.height) || video.width <= 0 || video.height <= 0 {
            throw exceeded(probe.path, "resolution", "\(video.width)x\(video.height)", "\(limits.maxPixels) pixels")
        }
        if video.frameRate > limits.maxFrameRate {
            throw exceeded(probe.path, "frame_rate", String(format: "%.1f fps", video.frameRate), String(format: "%.0f fps", limits.maxFrameRate))
        }
        try checkStreams(probe)
        if let audio = probe.audio { try check(audio: audio, in: probe) }
    }

    /// A sound stream (a clip's or the sound track's) and the streams around it.
    public func check(audio: AudioStreamInfo, in probe: SourceProbe) throws {
        try checkStreams(probe)
        if audio.channels > limits.maxAudioChannels {
            throw exceeded(probe.path, "audio_channels", "\(audio.channels) channels", "\(limits.maxAudioChannels)")
        }
        if audio.sampleRate > Preset.Limits.maxSampleRate {
            throw exceeded(probe.path, "sample_rate", "\(audio.sampleRate) Hz", "\(Preset.Limits.maxSampleRate) Hz")
        }
    }

    /// The picture-size limit, the same in the headers and decoded.
    private func fits(pixels: Int) -> Bool { pixels <= limits.maxPixels }

    private func checkStreams(_ probe: SourceProbe) throws {
        if probe.streamCount > limits.maxStreams {
            throw exceeded(probe.path, "streams", "\(probe.streamCount) streams", "\(limits.maxStreams)")
        }
    }

    /// The sound track's stream and length.
    public func checkSoundTrack(_ probe: SourceProbe) throws {
        guard let audio = probe.audio else { throw TranscodeError.noAudioStream(path: probe.path) }
        try check(audio: audio, in: probe)
        if probe.durationSeconds > limits.maxSoundTrackSeconds {
            throw exceeded(probe.path, "sound_track_duration", String(format: "%.2f s", probe.durationSeconds),
                           String(format: "%.0f s", limits.maxSoundTrackSeconds))
        }
    }

    /// The joined length to plan for: `estimated` (from headers and trims) when within the
    /// limit, the limit itself under `overLength: trim`; over it under `reject`, a refusal.
    public func admitDuration(estimated: Double, clips: Int, upload path: String) throws -> Double {
        guard estimated > limits.maxDurationSeconds else { return estimated }
        guard limits.overLength == .trim else {
            let joined = clips > 1 ? " (\(clips) clips joined, from headers)" : ""
            throw exceeded(path, "duration", String(format: "%.2f s", estimated) + joined,
                           String(format: "%.0f s", limits.maxDurationSeconds))
        }
        return limits.maxDurationSeconds
    }

    // MARK: Decoded

    /// A decoded picture's size: what counts against the pixel limit, whatever the headers said.
    public func checkDecodedPicture(width: Int, height: Int, path: String) throws {
        if !fits(pixels: width * height) {
            throw exceeded(path, "resolution", "\(width)x\(height) (decoded)", "\(limits.maxPixels) pixels")
        }
    }

    /// Output frames in the duration limit: the most the timeline may hold (trim), or the first
    /// frame count that is over it (reject, allowing the last frame's own duration).
    public func maxFrames(frameRate: Int) -> Int {
        Int((limits.maxDurationSeconds * Double(frameRate)).rounded(.down))
    }

    /// Whether a timeline already holding `frames` frames may take one more decoded frame: false
    /// once it is full under `overLength: trim`; a refusal under `reject`.
    public func admitFrame(after frames: Int, frameRate: Int, path: String, clips: Int) throws -> Bool {
        let most = maxFrames(frameRate: frameRate)
        guard frames >= most else { return true }
        if limits.overLength == .trim { return false }
        guard frames > most else { return true }
        let joined = clips > 1 ? " (clips joined, decoded)" : " (decoded)"
        throw exceeded(path, "duration", String(format: "more than %.2f s", Double(frames) / Double(frameRate)) + joined,
                       String(format: "%.0f s", limits.maxDurationSeconds))
    }
}
