

/// The sound (music) track laid under the joined clips.
public struct MusicSource: Sendable, Codable, Equatable {
    public enum Mode: String, Sendable, Codable, CaseIterable {
        /// The music replaces the clips' own sound.
        case replace
        /// The music plays under the clips' sound, each at its own gain.
        case mix
    }

    public var path: String
    /// Where in the track playback starts, in seconds.
    public var offsetSeconds: Double
    public var mode: Mode
    /// Gain applied to the clips' sound in `mix` mode, in dB.
    public var clipGainDB: Double
    /// Gain applied to the music, in dB.
    public var musicGainDB: Double
    /// Repeat the track when it is shorter than the video (otherwise silence follows it).
    public var loop: Bool
    /// Length of the fade-out that ends the music with the video, in seconds.
    public var fadeOutSeconds: Double

    public init(path: String, offsetSeconds: Double = 0, mode: Mode = .replace, clipGainDB: Double = 0,
                musicGainDB: Double = 0, loop: Bool = false, fadeOutSeconds: Double = 1) {
        self.path = path
        self.offsetSeconds = offsetSeconds
        self.mode = mode
        self.clipGainDB = clipGainDB
        self.musicGainDB = musicGainDB
        self.loop = loop
        self.fadeOutSeconds = fadeOutSeconds
    }
}
