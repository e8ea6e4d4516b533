import Foundation

/// A job a worker holds: what to run, and the fencing token that proves it still holds it.
/// Every claim of a job gets a larger token; a store records nothing for a token it no longer
/// holds.
public struct ClaimedJob: Sendable, Equatable {
    public var id: String
    /// The fencing token of this attempt.
    public var token: Int64
    /// This attempt's number, 1 for the first (released attempts do not count).
    public var attempt: Int
    public var input: TranscodeJob.Input
    /// The preset as canonical JSON when the job carries its own (the queue's); nil: the worker's.
    public var preset: String?
    /// Where the job process leaves its result and progress (the spool's `work/<id>/`, which
    /// `status` reads); nil: a private scratch directory.
    public var directory: String?
    /// The upload's own id (`upload.json`'s) when its producer recorded one (the queue's);
    /// otherwise the attempt reads it from the upload.
    public var uploadID: String?
    /// The playback policy its producer asked for (`submit --playback`, the upload URL's); nil:
    /// none asked (the host's default and the upload's own decide).
    public var playback: PlaybackPolicy?

    public init(id: String, token: Int64, attempt: Int, input: TranscodeJob.Input, preset: String? = nil, directory: String? = nil,
                uploadID: String? = nil, playback: PlaybackPolicy? = nil) {
        self.playback = playback
        self.id = id
        self.token = token
        self.attempt = attempt
        self.input = input
        self.preset = preset
        self.directory = directory
        self.uploadID = uploadID
    }
}

/// An attempt whose lease ran out, as the store's rescue found it (``JobStore/rescue(now:)``):
/// its job went back to the queue or failed, and whatever the attempt left is its own to remove.
public struct ExpiredAttempt: Sendable, Equatable, CustomStringConvertible {
    public var id: String
    /// The fencing token of the attempt that stopped renewing.
    public var token: Int64

    public init(id: String, token: Int64) {
        self.id = id
        self.token = token
    }

    public var description: String { "\(id)@\(token)" }
}
