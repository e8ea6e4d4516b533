/// The ready record written as `manifest.json`: everything a feed service needs to serve the video.
public struct ReadyManifest: Sendable, Codable, Equatable {
    public var version = 2
    /// Output duration in seconds (video; audio is trimmed to it).
    public var durationSeconds: Double
    public var width: Int
    public var height: Int
    public var frameRate: Int
    public var master: String
    /// With other codecs than H.264: each codec's ladder alone (`master-av1.m3u8`, …), by codec
    /// (`av1`, `hevc`, `h264`), for players that must stay on one codec (docs/OUTPUT.md).
    public var codecMasters: [String: String]?
    public var renditions: [Rendition]
    public var audio: Audio
    public var mp4: String
    public var posters: [Image]
    public var storyboard: StoryboardFiles
    /// The animated preview loop (absent when the preset turns it off).
    public var preview: Preview?
    /// The `id` from `upload.json` (absent for a plain video file).
    public var uploadID: String?
    /// The clips joined, in order (one for a plain video file).
    public var sources: [SourceProbe]
    /// The sound track laid under them, if any.
    public var music: SourceProbe?
    /// True when the joined clips ran past the duration limit and were cut there (preset `overLength: trim`).
    public var trimmedToLimit: Bool
    /// Whether the top rung and the MP4 are the upload's own H.264 (`passthrough`) or encoded, and
    /// why (absent from manifests written before the choice existed).
    public var topRung: TopRung?
    public var preset: PresetRef
    public var timings: Timings
    /// Free-form metadata passed through from the upload.
    public var metadata: [String: JSONValue]
    /// The caption tracks, one per language (absent when there are none), in the master's
    /// subtitles group.
    public var captions: [Caption]?
    /// Who may play it: `signed`, only through signed URLs; `public` (absent from manifests
    /// written before playback policies: public too).
    public var playback: String?

    public struct TopRung: Sendable, Codable, Equatable {
        public var mode: TopRungDecision.Mode
        public var reason: String
    }

    public struct Rendition: Sendable, Codable, Equatable {
        public var name: String
        public var playlist: String
        /// The I-frame (trick-play) playlist of the same rendition.
        public var iFramePlaylist: String
        public var width: Int
        public var height: Int
        public var bandwidth: Int
        public var averageBandwidth: Int
        public var codecs: String
        public var segments: Int
        /// The video codec (absent from manifests written before other codecs: H.264).
        public var videoCodec: VideoCodec?
    }

    /// A published caption track: its subtitles playlist, the track whole, and its words.
    public struct Caption: Sendable, Codable, Equatable {
        /// A BCP 47 tag (`en`, `pt-BR`).
        public var language: String
        public var name: String
        /// Who made it: `app` (the upload brought it).
        public var source: String
        /// The subtitles playlist (segmented WebVTT on the video's timeline).
        public var playlist: String
        /// The whole track as one WebVTT file.
        public var track: String
        public var cues: Int
        /// The words as a viewer reads them: tags left out, entities read, a line per cue.
        public var text: String

        public init(language: String, name: String, source: String, playlist: String, track: String, cues: Int, text: String) {
            self.language = language
            self.name = name
            self.source = source
            self.playlist = playlist
            self.track = track
            self.cues = cues
            self.text = text
        }
    }

    public struct Audio: Sendable, Codable, Equatable {
        public var codec: String
        public var sampleRate: Int
        public var channels: Int
        /// The clips' own sound is in the mix.
        public var clipSound: Bool
        /// A sound track is in the mix.
        public var music: Bool
        public var durationSeconds: Double
    }

    public struct Image: Sendable, Codable, Equatable {
        public var path: String
        public var width: Int
        public var height: Int
    }

    public struct StoryboardFiles: Sendable, Codable, Equatable {
        public var image: String
        public var track: String
        public var columns: Int
        public var rows: Int
        public var intervalSeconds: Int
    }

    public struct Preview: Sendable, Codable, Equatable {
        public var path: String
        public var width: Int
        public var height: Int
        /// Frames in the file (identical neighbours are one longer frame).
        public var frames: Int
        public var fps: Double
        public var durationSeconds: Double
        public var bytes: Int
        /// Where the loop starts on the output timeline.
        public var startSeconds: Double
    }

    public struct PresetRef: Sendable, Codable, Equatable {
        public var name: String
        public var hash: String
    }

    public struct Timings: Sendable, Codable, Equatable {
        public var wallSeconds: Double
        /// Output media seconds per wall second.
        public var speed: Double
        public var posterAtSeconds: Double
    }
}
