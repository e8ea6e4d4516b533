import Foundation

/// What the daemon remembers about a claimed job, in `work/<id>/job.json`.
public struct JobRecord: Codable, Sendable, Equatable {
    public var id: String
    /// File (or directory) name of the original inside the job directory.
    public var original: String
    public var receivedAt: Date
    /// Failed attempts so far (crashes, timeouts, retryable errors).
    public var attempts: Int
    /// Earliest time of the next attempt (exponential backoff).
    public var notBefore: Date?
    public var lastError: String?
    /// The fencing token of the latest claim (absent in records written before tokens).
    public var token: Int64?
    /// Once published: where the video plays, as its target said.
    public var place: PlaybackPlace?
    /// A record written before places were: the published output (`CDN/<id>`, or a bucket's version).
    public var output: String?
    /// Who may play it: what its producer asked (`serve`'s signed upload URL) until an attempt
    /// resolves it, then what it was shown or published with (`ingestd playback` changes it).
    public var playback: PlaybackPolicy?

    /// Where the published video plays (a record from before places: read from its output).
    public var playbackPlace: PlaybackPlace? { place ?? output.map { .recordedBefore(id: id, output: $0) } }
}
