/// One recorded clip of an upload, optionally trimmed on its own timeline.
public struct ClipSource: Sendable, Codable, Equatable {
    public var path: String
    /// Seconds cut from the start of the clip (0: none).
    public var startSeconds: Double
    /// Where the clip ends on its own timeline, or nil for its natural end.
    public var endSeconds: Double?

    public init(path: String, startSeconds: Double = 0, endSeconds: Double? = nil) {
        self.path = path
        self.startSeconds = startSeconds
        self.endSeconds = endSeconds
    }
}
