import Foundation

extension Preset {
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
