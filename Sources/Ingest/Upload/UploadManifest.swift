import Transcode

/// `upload.json`: what a multi-clip upload directory holds and how to join it.
///
/// ```json
/// {
///   "id": "7f3a-beach-day",
///   "clips": [
///     { "file": "clip1.mp4" },
///     { "file": "clip2.mov", "start": 0.5, "end": 4.0 }
///   ],
///   "audio": { "file": "song.m4a", "offset": 12.0, "mode": "mix", "clipGain": 0, "musicGain": -6,
///              "loop": false, "fadeOut": 1.0 },
///   "captions": [{ "file": "en.vtt", "language": "en", "name": "English" }],
///   "metadata": { "caption": "first swim of the year", "tags": ["beach"] }
/// }
/// ```
/// File names are relative to the upload directory. Unknown fields are errors.
public struct UploadManifest: Sendable, Codable, Equatable {
    /// The uploader's id for this upload: 1–128 of `A–Z a–z 0–9 . _ -`, not starting with a dot.
    public var id: String

    /// Whether `id` follows the rule above.
    public static func isValidID(_ id: String) -> Bool {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
        return (1...128).contains(id.count) && id.allSatisfy(allowed.contains) && !id.hasPrefix(".")
    }
    /// The clips, in playback order.
    public var clips: [Clip]
    /// The sound track, if any.
    public var audio: Audio?
    /// Anything JSON; copied to `manifest.json` as given.
    public var metadata: [String: JSONValue]?
    /// `signed`: the video plays only through signed URLs (the strictest of this, the app's and
    /// the host's choice wins: an upload cannot make public what they sign).
    public var playback: PlaybackPolicy?
    /// Caption tracks timed on the whole video (a clip's own go in ``Clip/captions``).
    public var captions: [Captions]?

    /// A caption file (WebVTT or SRT) and its language.
    public struct Captions: Sendable, Codable, Equatable {
        public var file: String
        /// A BCP 47 tag: `en`, `pt-BR`.
        public var language: String
        /// What a player's menu shows (default: the language's English name).
        public var name: String?
    }

    public struct Clip: Sendable, Codable, Equatable {
        public var file: String
        /// Seconds cut from the clip's start (default 0).
        public var start: Double?
        /// Where the clip stops, in seconds on its own timeline (default: its end).
        public var end: Double?
        /// Caption tracks timed on this clip's own timeline, moved and cut with its trim.
        public var captions: [Captions]?
    }

    public struct Audio: Sendable, Codable, Equatable {
        public var file: String
        /// Seconds into the track where playback starts (default 0).
        public var offset: Double?
        /// `replace` (default): the music replaces the clips' sound; `mix`: it plays under it.
        public var mode: MusicSource.Mode?
        /// Gain of the clips' sound in `mix` mode, dB (default 0).
        public var clipGain: Double?
        /// Gain of the music, dB (default 0).
        public var musicGain: Double?
        /// Repeat the track when it is shorter than the video (default false: silence after it).
        public var loop: Bool?
        /// Fade-out at the end of the video, seconds (default 1).
        public var fadeOut: Double?
    }
}
