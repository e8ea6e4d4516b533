/// How one clip is normalised on its way into the timeline.
public struct PlannedClip: Sendable, Codable, Equatable {
    public var source: SourceProbe
    /// Trim window on the clip's own frame grid at the preset's rate: first frame kept and first frame dropped (nil: to the end).
    public var startFrame: Int
    public var endFrame: Int?
    /// Clockwise rotation applied to the decoded frames.
    public var rotation: Int
    /// Tone mapping applied, or `.sdr` when the clip already is SDR.
    public var toneMapFrom: DynamicRange
    /// The clip's YUV matrix (`bt601`, `bt709`, …); converted to BT.709 once, before the fan-out.
    public var sourceColorMatrix: String
    /// The clip reaches the fan-out in full range (an SDR source tagged or formatted so): the rung
    /// scalers bring it to TV range. Otherwise they must not ask for a range, or a rung at the
    /// frame's own size would be converted for nothing.
    public var reachesFanOutFullRange: Bool
    /// Scaled (per the fit policy) and padded or cropped to the output frame, as 8-bit 4:2:0.
    /// False only for a single clip, whose frames reach the rung scalers untouched.
    public var conform: Bool
    /// The clip's own sound goes into the mix (false: it contributes silence of its exact length).
    public var usesSound: Bool
    /// Length after trimming, from the container header (0: unknown until decoded).
    public var estimatedSeconds: Double
}

/// How the sound track is laid under the clips.
public struct PlannedMusic: Sendable, Codable, Equatable {
    public var source: SourceProbe
    public var offsetSeconds: Double
    public var mode: MusicSource.Mode
    public var clipGainDB: Double
    public var musicGainDB: Double
    public var loop: Bool
    public var fadeOutSeconds: Double
}
