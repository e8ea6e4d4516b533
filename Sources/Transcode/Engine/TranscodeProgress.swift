import Foundation

/// Progress of a running transcode, sent out of band on the event stream.
public struct TranscodeProgress: Sendable, Equatable, Codable {
    /// Output media time written so far, in seconds.
    public var outputSeconds: Double
    /// Expected output duration (from the probe), in seconds.
    public var totalSeconds: Double
    public var framesEncoded: Int
    public var elapsedSeconds: Double

    public var fraction: Double { totalSeconds > 0 ? min(1, outputSeconds / totalSeconds) : 0 }
    public var framesPerSecond: Double { elapsedSeconds > 0 ? Double(framesEncoded) / elapsedSeconds : 0 }
    /// Media seconds per wall-clock second.
    public var speed: Double { elapsedSeconds > 0 ? outputSeconds / elapsedSeconds : 0 }
    public var etaSeconds: Double? { speed > 0 ? max(0, totalSeconds - outputSeconds) / speed : nil }
}
