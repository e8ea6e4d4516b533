/// A video codec the ladder can be encoded in.
public enum VideoCodec: String, Sendable, Codable, CaseIterable {
    /// libx264, High profile: every player. The ladder every preset starts with.
    case h264
    /// libx265, Main profile, tagged `hvc1` (Apple's players need that tag).
    case hevc
    /// libsvtav1, Main profile.
    case av1

    /// Rank in the master playlist within one resolution: the most efficient codec first, so a
    /// player that can decode it picks it, and one that cannot falls through to the next.
    var masterRank: Int {
        switch self {
        case .av1: 0
        case .hevc: 1
        case .h264: 2
        }
    }
}

/// More renditions of the ladder in another codec (AV1, HEVC), at the resolutions of the H.264
/// rungs they name, on the same keyframes and segment boundaries, carrying the same sound: what
/// `Presets/hot.json` adds for the videos most watched.
public struct CodecLadder: Sendable, Codable, Equatable {
    public var codec: VideoCodec
    /// The encoder's speed preset: libx265's names (`ultrafast` … `placebo`), SVT-AV1's numbers
    /// (`0` slowest … `13` fastest).
    public var encoderPreset: String
    /// libx265's `tune` (`ssim`, `psnr`, `grain`, …); SVT-AV1's `tune` (`0` visual, `1` PSNR).
    public var tune: String?
    public var rungs: [Rung]
    /// Where these settings come from (the measurement behind them); read by people, not by the engine.
    public var note: String?

    public init(codec: VideoCodec, encoderPreset: String, tune: String? = nil, rungs: [Rung], note: String? = nil) {
        self.codec = codec
        self.encoderPreset = encoderPreset
        self.tune = tune
        self.rungs = rungs
        self.note = note
    }

    /// One rendition, at the size of the H.264 rung `name` (and only when that rung is planned).
    public struct Rung: Sendable, Codable, Equatable {
        /// The H.264 rung (``Preset/Rung/name``) whose size, keyframes and sound this one shares.
        public var name: String
        public var crf: Int
        /// Rate cap (HEVC: x265's VBV; AV1: not available in SVT-AV1 1.4, so none).
        public var maxrateKbps: Int?
        public var bufsizeKbps: Int?
        /// This rung's speed preset (default the ladder's).
        public var encoderPreset: String?

        public init(name: String, crf: Int, maxrateKbps: Int? = nil, bufsizeKbps: Int? = nil, encoderPreset: String? = nil) {
            self.name = name
            self.crf = crf
            self.maxrateKbps = maxrateKbps
            self.bufsizeKbps = bufsizeKbps
            self.encoderPreset = encoderPreset
        }
    }

    /// Why this ladder cannot be used beside `h264` (the preset's rungs), or nil; `field` is its
    /// JSON path.
    func problem(h264: [Preset.Rung], field: String) -> (field: String, reason: String)? {
        let speeds: [String]
        let tunes: [String]
        let crfs: ClosedRange<Int>
        switch codec {
        case .h264: return ("\(field).codec", "h264 is the preset's own ladder (`rungs`); codecLadders add hevc or av1")
        case .hevc: (speeds, tunes, crfs) = (Preset.encoderSpeeds + ["placebo"], ["psnr", "ssim", "grain", "fastdecode", "zerolatency", "animation"], 0...51)
        case .av1: (speeds, tunes, crfs) = ((0...13).map(String.init), ["0", "1"], 1...63)
        }
        func speedProblem(_ value: String, _ path: String) -> (String, String)? {
            speeds.contains(value) ? nil : (path, "must be one of \(speeds.joined(separator: ", ")) for \(codec.rawValue)")
        }
        if let problem = speedProblem(encoderPreset, "\(field).encoderPreset") { return problem }
        if let tune, !tunes.contains(tune) { return ("\(field).tune", "must be one of \(tunes.joined(separator: ", ")) for \(codec.rawValue)") }
        guard !rungs.isEmpty else { return ("\(field).rungs", "at least one rung") }
        var seen = Set<String>()
        for (index, rung) in rungs.enumerated() {
            let path = "\(field).rungs[\(index)]"
            guard h264.contains(where: { $0.name == rung.name }) else {
                return ("\(path).name", "'\(rung.name)' is not one of the preset's rungs (\(h264.map(\.name).joined(separator: ", ")))")
            }
            guard seen.insert(rung.name).inserted else { return ("\(path).name", "'\(rung.name)' appears twice") }
            guard crfs.contains(rung.crf) else { return ("\(path).crf", "must be \(crfs.lowerBound)...\(crfs.upperBound) for \(codec.rawValue)") }
            if let speed = rung.encoderPreset, let problem = speedProblem(speed, "\(path).encoderPreset") { return problem }
            switch (codec, rung.maxrateKbps, rung.bufsizeKbps) {
            case (.av1, nil, nil), (.hevc, nil, nil): break
            case (.av1, _, _): return ("\(path).maxrateKbps", "SVT-AV1 1.4 cannot cap a CRF encode: leave maxrateKbps and bufsizeKbps out")
            case (.hevc, let max?, let buffer?):
                guard (50...100_000).contains(max), (50...200_000).contains(buffer) else {
                    return ("\(path).maxrateKbps", "maxrateKbps must be 50...100000 and bufsizeKbps 50...200000")
                }
            default: return ("\(path).bufsizeKbps", "maxrateKbps and bufsizeKbps go together")
            }
        }
        return nil
    }
}
