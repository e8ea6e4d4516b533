import Foundation
import Transcode

/// What one attempt of a job produces: made when the attempt starts, filled in as it runs, and
/// handed to ``JobStore/finish(_:_:output:target:)`` at its end. Only data: where the output
/// goes, and every file operation on it, is the ``OutputTarget``'s.
public struct AttemptOutput: Sendable {
    public let id: String
    /// The attempt's fencing token: its version is `t<token>` (``AttemptVersion``).
    public let token: Int64
    /// What the job process left once it was done (a bucket's: the local copy uploaded); nil
    /// when it left nothing, or an earlier attempt's output was in view already.
    public var staging: String?
    /// The job's manifest, read once by the target when the job process is done; `{}` when none.
    public var manifest = Data("{}".utf8)
    /// True when the output was already in view as the attempt ended: an earlier attempt's,
    /// whose worker died before recording it. It is adopted, never withdrawn.
    public var adopted = false
    /// The upload's own id (`upload.json`'s), for the webhook.
    public var uploadID: String?
    /// Who may play the video: the strictest of the host's default, the producer's and the
    /// upload's own (``PlaybackPolicy/strictest(_:)``), resolved when the attempt starts.
    public var playback = PlaybackPolicy.public
    /// The last lines the job process logged (at most ``JobLogTail/limit`` bytes), kept with the
    /// attempt's end event when it did not publish.
    public var log: String?
    /// The clock webhook events are stamped with; nil: the worker records no webhooks.
    public var webhookClock: SharedClock?
    /// Runs inside the store's fence once the output is in place; nil in production (the
    /// contract tests take the lease away there, to show nobody can take the job meanwhile).
    public var whilePublishing: (@Sendable () async throws -> Void)?

    public init(id: String, token: Int64) {
        self.id = id
        self.token = token
    }

    /// The output of an end that publishes nothing (a release before the attempt ran).
    public static func none(_ job: ClaimedJob) -> AttemptOutput { AttemptOutput(id: job.id, token: job.token) }

    /// The version name of this attempt (`t<token>`).
    public var version: String { AttemptVersion.name(token: token) }

    /// The `upload.playable` webhook of a growing attempt that is shown at `place`
    /// (`afterSeconds`: since the upload came; `at`: the store's time, when it said); nil when
    /// webhooks are off.
    public func playableWebhook(_ report: JobPlayable, place: PlaybackPlace, afterSeconds: Double?, at: Date? = nil) -> OutboxEvent? {
        guard let clock = webhookClock else { return nil }
        return UploadEvent.playable(job: id, attempt: version, uploadID: uploadID, master: place.master, listedSeconds: report.seconds,
                                    afterSeconds: afterSeconds.map { ($0 * 1000).rounded() / 1000 }, playback: playback, at: at ?? clock.now())
    }

    /// The webhook of `end` as the store records it (its reason's message may name where the
    /// store files the upload): `upload.published` (where it plays: `place`), `upload.rejected`
    /// or `upload.failed`; nil for an end the backend does not hear of, or when webhooks are off.
    public func webhook(_ end: JobEnd, place: PlaybackPlace) -> OutboxEvent? {
        guard let now = webhookClock?.now() else { return nil }
        switch end {
        case .published:
            return UploadEvent.published(job: id, place: place, manifest: manifest, playback: playback, at: now)
        case .rejected(let reason), .failed(let reason):
            return UploadEvent.refused("upload.\(end.label)", job: id, uploadID: uploadID, code: reason.code, message: reason.message,
                                       attempts: reason.attempts, at: now)
        case .retried, .released:
            return nil
        }
    }
}
