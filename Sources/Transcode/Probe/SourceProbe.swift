/// What a source file contains, copied out of FFmpeg as plain values.
public struct SourceProbe: Sendable, Codable, Equatable {
    public var path: String
    /// Demuxer name, e.g. `mov,mp4,m4a,3gp,3g2,mj2`.
    public var container: String
    /// Container duration in seconds (a header claim, 0 when unknown).
    public var durationSeconds: Double
    public var sizeBytes: Int64
    public var streamCount: Int
    public var video: VideoStreamInfo?
    public var audio: AudioStreamInfo?

    public init(path: String, container: String, durationSeconds: Double, sizeBytes: Int64,
                streamCount: Int, video: VideoStreamInfo?, audio: AudioStreamInfo?) {
        self.path = path
        self.container = container
        self.durationSeconds = durationSeconds
        self.sizeBytes = sizeBytes
        self.streamCount = streamCount
        self.video = video
        self.audio = audio
    }
}

/// The video stream that will be transcoded.
public struct VideoStreamInfo: Sendable, Codable, Equatable {
    public var codec: String
    /// Coded size, before rotation.
    public var width: Int
    public var height: Int
    /// Clockwise rotation in degrees (0, 90, 180, 270) needed to show the picture upright.
    public var rotation: Int
    public var frameRate: Double
    public var pixelFormat: String
    public var bitDepth: Int
    public var colorTransfer: String
    public var colorPrimaries: String
    public var colorSpace: String
    public var dolbyVision: Bool
    /// Sample range as FFmpeg names it: `tv` (limited), `pc` (full) or `unknown`; nil when not probed.
    public var colorRange: String?
    /// Pixel (sample) aspect ratio, width over height, when the stream declares one.
    public var pixelAspect: Double?
    /// True when the stream declares interlaced fields; nil when it says nothing.
    public var interlaced: Bool?
    /// Codec profile as FFmpeg names it (`High`, `Main`, …) and level ×10 (H.264 4.0: 40), when known.
    public var profile: String?
    public var level: Int?
    /// For H.264, what its packets say (IDR positions, frame timing, peak bitrate).
    public var packets: VideoPacketScan?

    public init(codec: String, width: Int, height: Int, rotation: Int = 0, frameRate: Double,
                pixelFormat: String = "yuv420p", bitDepth: Int = 8, colorTransfer: String = "bt709",
                colorPrimaries: String = "bt709", colorSpace: String = "bt709", dolbyVision: Bool = false,
                colorRange: String? = nil, pixelAspect: Double? = nil, interlaced: Bool? = nil, profile: String? = nil, level: Int? = nil, packets: VideoPacketScan? = nil) {
        self.codec = codec
        self.width = width
        self.height = height
        self.rotation = rotation
        self.frameRate = frameRate
        self.pixelFormat = pixelFormat
        self.bitDepth = bitDepth
        self.colorTransfer = colorTransfer
        self.colorPrimaries = colorPrimaries
        self.colorSpace = colorSpace
        self.dolbyVision = dolbyVision
        self.colorRange = colorRange
        self.pixelAspect = pixelAspect
        self.interlaced = interlaced
        self.profile = profile
        self.level = level
        self.packets = packets
    }

    /// Size as displayed, after rotation.
    public var displayWidth: Int { rotation % 180 == 0 ? width : height }
    public var displayHeight: Int { rotation % 180 == 0 ? height : width }

    /// True when the samples use the full 0–255 range (a `yuvj` format or a `pc` range tag); H.264
    /// without the tag is limited range.
    public var isFullRange: Bool { pixelFormat.hasPrefix("yuvj") || colorRange == "pc" }

    /// The transfer characteristic family, which decides whether tone mapping is needed.
    public var dynamicRange: DynamicRange {
        switch colorTransfer {
        case "arib-std-b67": .hlg
        case "smpte2084": .pq
        default: .sdr
        }
    }
}

extension VideoStreamInfo {
    /// The YUV matrix the source was encoded with, as FFmpeg names it. Untagged video follows the
    /// usual convention (and HandBrake's): BT.601 below 720 lines, BT.709 from 720 lines up.
    public var effectiveColorMatrix: String {
        switch colorSpace {
        case "unknown", "unspecified", "reserved", "": min(width, height) >= 720 ? "bt709" : "bt601"
        case "bt470bg", "smpte170m": "bt601"
        default: colorSpace
        }
    }
}

public enum DynamicRange: String, Sendable, Codable {
    case sdr, hlg, pq
}

/// The audio stream that will be transcoded.
public struct AudioStreamInfo: Sendable, Codable, Equatable {
    public var codec: String
    public var sampleRate: Int
    public var channels: Int

    public init(codec: String, sampleRate: Int, channels: Int) {
        self.codec = codec
        self.sampleRate = sampleRate
        self.channels = channels
    }
}

extension VideoStreamInfo {
    /// Clockwise degrees from FFmpeg's display-matrix angle (counter-clockwise), snapped to 90°.
    static func clockwiseRotation(fromDisplayMatrixDegrees degrees: Double) -> Int {
        guard degrees.isFinite else { return 0 }
        let clockwise = Int((-degrees).rounded())
        let snapped = Int((Double(clockwise) / 90).rounded()) * 90
        return ((snapped % 360) + 360) % 360
    }
}
