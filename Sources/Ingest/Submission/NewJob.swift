import Foundation

/// A job as a producer queues it (``Submitter``): its id, its upload, the upload's own id and
/// the preset it is encoded with.
public struct NewJob: Sendable, Equatable {
    public var id: String
    /// The upload: a path (a file, an upload directory, an `s3://` object or prefix) or the sole
    /// entry of a holder directory (the spool's, whatever bytes its name is made of).
    public var input: TranscodeJob.Input
    /// The `id` in an upload directory's `upload.json`, which the job's webhooks carry as `uploadId`.
    public var uploadID: String?
    /// The preset as canonical JSON.
    public var preset: String
    /// Whether the input is ingestd's own (what `serve` received, a spool's `queued/` entry): a
    /// deletion removes it. A path given to `submit` is the operator's, and stays.
    public var ownsInput: Bool
    /// `signed`: the producer asks for signed playback (`submit --playback`, a signed upload URL).
    public var playback: PlaybackPolicy?

    public init(id: String, input: TranscodeJob.Input, uploadID: String? = nil, preset: String, ownsInput: Bool = false,
                playback: PlaybackPolicy? = nil) {
        self.playback = playback
        self.id = id
        self.input = input
        self.uploadID = uploadID
        self.preset = preset
        self.ownsInput = ownsInput
    }
}
