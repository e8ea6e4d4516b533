/// What the packets of an H.264 stream with avcC (length-prefixed, as in MP4) samples say, read
/// without decoding them: enough to decide whether the stream can become the top rung as it is
/// (see ``TopRungDecision``).
public struct VideoPacketScan: Sendable, Codable, Equatable {
    /// Number of video packets (frames).
    public var frames: Int
    /// Presentation time of the first frame, seconds from the start of the presentation.
    public var firstFrameSeconds: Double
    /// Shortest and longest distance between consecutive presentation times, in seconds.
    public var minFrameSeconds: Double
    public var maxFrameSeconds: Double
    /// Presentation times (seconds from the start of the presentation) of the frames that carry
    /// an IDR picture, in order.
    public var idrSeconds: [Double]
    /// Largest number of bits in any run of consecutive frames (in decode order) lasting one
    /// second at the stream's frame rate, in kbit/s.
    public var peakKbps: Int

    public init(frames: Int, firstFrameSeconds: Double, minFrameSeconds: Double, maxFrameSeconds: Double,
                idrSeconds: [Double], peakKbps: Int) {
        self.frames = frames
        self.firstFrameSeconds = firstFrameSeconds
        self.minFrameSeconds = minFrameSeconds
        self.maxFrameSeconds = maxFrameSeconds
        self.idrSeconds = idrSeconds
        self.peakKbps = peakKbps
    }
}
