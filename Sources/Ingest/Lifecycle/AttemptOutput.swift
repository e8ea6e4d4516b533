import Foundation
import Transcode

/// What one attempt of a job produces and where it goes: made when the attempt starts, handed
/// to ``JobStore/finish(_:_:output:)`` at its end. The stores record; this value does every
/// file operation (publish, withdraw) and builds the webhook body, so both stores fence the
/// same way and neither reads the output itself.
///
/// - A directory CDN: the job process stages beside `CDN/<id>` (in `.<id>.staging-t<token>`)
///   and ``publish()`` renames the staging into place.
/// - A directory CDN, growing (``growing``, the default of `watch`): the job process writes its
///   own version `CDN/<id>/t<token>` in place, and the video is played while it is made:
///   ``showGrowing()`` points `CDN/<id>/master.m3u8` into the version once the ladder can be
///   played, and ``publish()`` repoints it at the measured master and adds `manifest.json`.
/// - A bucket CDN (`s3://…`), which has no rename: the attempt uploads to its own version
///   prefix `CDN/<id>/t<token>`, and the store's record of the end (the job's row, the spool's
///   pointer) is what names it.
public struct AttemptOutput: Sendable {
    public let id: String
    public let token: Int64
    /// `CDN/<id>`: where the job is public (for a bucket, the prefix holding its pointer).
    public let published: String
    /// Where the job process writes: `CDN/<id>` (it stages beside it), or this attempt's version
    /// (`CDN/<id>/t<token>`) when growing or in a bucket.
    public let destination: String
    /// What the store records as the job's output once published: where its manifest's paths
    /// start. `CDN/<id>` in a directory CDN (a growing version is reached through the pointers
    /// there); in a bucket, this attempt's version, which only the store's record names.
    public var recorded: String { isBucket ? destination : published }
    public let isBucket: Bool
    /// The job process writes its version in place and the video is played while it grows.
    public let growing: Bool
    /// A bucket's version played while it grows: the job process writes its output in place in
    /// the job's scratch, and the worker mirrors it into the version prefix as it lands
    /// (``RemoteMirror``).
    public let growsInBucket: Bool
    private let cdn: String
    /// The directory the job process staged in, once it is done (a bucket's: the local copy it uploaded).
    public private(set) var staging: String?
    /// The job's manifest, read once when the job process is done; `{}` when there is none.
    public private(set) var manifest = Data("{}".utf8)
    /// True when the output was already in view as the attempt ended: an earlier attempt's,
    /// whose worker died before recording it. It is adopted, never withdrawn.
    public private(set) var adopted = false
    /// The upload's own id (`upload.json`'s), for the webhook.
    public var uploadID: String?
    /// The last lines the job process logged (at most ``JobLogTail/limit`` bytes), kept with the
    /// attempt's end event when it did not publish.
    public var log: String?
    /// The clock webhook events are stamped with; nil: the worker records no webhooks.
    public var webhookClock: SharedClock?
    /// Runs inside the store's fence once the output is in place; nil in production (the
    /// contract tests take the lease away there, to show nobody can take the job meanwhile).
    public var whilePublishing: (@Sendable () async throws -> Void)?

    /// `growing`: for a directory CDN, the video is played while it is made (ignored for a bucket).
    public init(cdn: String, id: String, token: Int64, growing: Bool = false) {
        self.id = id
        self.token = token
        self.cdn = cdn
        isBucket = RemotePath.isRemote(cdn)
        self.growing = growing && !isBucket
        growsInBucket = growing && isBucket
        published = "\(cdn)/\(id)"
        destination = isBucket || self.growing ? "\(cdn)/\(id)/\(AttemptVersion.name(token: token))" : "\(cdn)/\(id)"
    }

    /// The output of an end that publishes nothing (a release before the attempt ran).
    public static func none(_ job: ClaimedJob) -> AttemptOutput { AttemptOutput(cdn: "", id: job.id, token: job.token) }

    /// The job process is done and left `staging` (nil: nothing staged, or an earlier
    /// attempt's output already in place): the manifest is read here, once.
    public mutating func staged(at staging: String?) {
        self.staging = staging
        adopted = isInView
        let sources = adopted ? [published] : [staging].compactMap { $0 }
        manifest = sources.lazy.compactMap { FileManager.default.contents(atPath: "\($0)/manifest.json") }.first ?? Data("{}".utf8)
        if growing, !adopted, let own = try? JSONDecoder().decode(ReadyManifest.self, from: manifest) {
            manifest = VersionPointer.manifest(own, version: version).jsonData()  // as `CDN/<id>/manifest.json` will say
        }
    }

    /// Whether ``publish()`` is to put this attempt's output in view (what ``withdraw()`` undoes):
    /// a directory output (renamed, or a growing one's pointers written) that no earlier attempt
    /// put in view.
    public var renamesIntoView: Bool { !isBucket && staging != nil && !adopted && !isInView }

    /// The version name of this attempt (`t<token>`).
    public var version: String { AttemptVersion.name(token: token) }

    /// Puts the output in view; called by the store under the job's fence. Returns whether it
    /// renamed this attempt's staging into view (what ``withdraw()`` undoes): an output already
    /// there (adopted) stays and this attempt's staging is discarded; a bucket's is in place.
    @discardableResult
    public func publish() async throws -> Bool {
        var renamed = false
        if growing, let staging {
            renamed = try GrowingVersion(root: published, token: token).publish(staging: staging, adopted: adopted)
        } else if !isBucket, let staging {
            let staged = StagedDirectory(destination: destination, staging: staging)
            if adopted || isInView {
                staged.discard()
            } else {
                try staged.publish(synced: true)  // the job process flushed it
                renamed = true
            }
        }
        try await whilePublishing?()
        return renamed
    }

    /// Undoes a ``publish()`` that renamed, for a store that knows its record of the end did
    /// not happen: the output goes back to its staging name, so nothing stays in view that the
    /// store does not call published.
    public func withdraw() throws {
        if growing { return try GrowingVersion(root: published, token: token).withdraw() }
        guard !isBucket, let staging, !FileManager.default.fileExists(atPath: staging),
              FileManager.default.fileExists(atPath: "\(destination)/manifest.json") else { return }
        try StagedDirectory(destination: destination, staging: staging).withdraw()
    }

    /// Removes the staging the job process left (a published attempt's that the store then
    /// refused or fenced out).
    public func discard() {
        if growing { return GrowingVersion(root: published, token: token).discard() }  // the pointer first
        if let staging { try? FileManager.default.removeItem(atPath: staging) }
    }

    /// Removes what this attempt staged in a directory CDN, found by name: a job process that
    /// was stopped or killed cannot remove it itself, and left no result to say where it is.
    /// Only this attempt's own goes (a newer attempt's may be beside it).
    public func discardStaging() {
        if growing { GrowingVersion(root: published, token: token).discard() }
        guard !isBucket else { return }
        try? FileManager.default.removeItem(atPath: "\(cdn)/\(StagedDirectory.stagingPrefix(of: id))\(AttemptVersion.name(token: token))")
    }

    /// Removes the stagings of this job's earlier attempts in a directory CDN (their owners lost
    /// the job, or were killed; no newer attempt can exist while this one holds the job).
    public func discardEarlierStagings() {
        guard !isBucket else { return }
        // Whatever this attempt's mode: a growing attempt of a daemon since restarted with `--hold`.
        GrowingVersion(root: published, token: token).discardEarlier()
        let prefix = StagedDirectory.stagingPrefix(of: id)
        for name in (try? FileManager.default.contentsOfDirectory(atPath: cdn)) ?? [] where name.hasPrefix(prefix) {
            if let attempt = AttemptVersion.token(of: name.dropFirst(prefix.count)), attempt >= token { continue }
            try? FileManager.default.removeItem(atPath: "\(cdn)/\(name)")
        }
    }

    /// Whether an earlier attempt already put the output in view (its worker died before
    /// recording the end): this attempt then only records it.
    public var isInView: Bool { !isBucket && FileManager.default.fileExists(atPath: "\(published)/manifest.json") }

    /// Makes this attempt's growing version what `CDN/<id>/master.m3u8` plays, unless the video
    /// is published already or a newer attempt's is shown; called by the store under the job's
    /// fence. Returns whether it is shown.
    public func showGrowing() throws -> Bool {
        guard growing else { return growsInBucket }  // a bucket's version is named by the store's record alone
        return try GrowingVersion(root: published, token: token).show()
    }

    /// Where this attempt's video plays (``PlaybackPlace``): `<id>` (its pointers), or in a bucket
    /// its version's own prefix, `<id>/t<token>` (`version`: another attempt's, that the bucket's
    /// pointer names).
    public func place(version: String? = nil) -> PlaybackPlace {
        PlaybackPlace(base: isBucket ? "\(id)/\(version ?? self.version)" : id)
    }

    /// Where a growing video plays, relative to the CDN: `<id>/master.m3u8` (the pointer), or in
    /// a bucket the version's own master, `<id>/t<token>/master.m3u8`.
    public var growingMaster: String { place().master }

    /// The `upload.playable` webhook of a growing attempt that is shown (`afterSeconds`: since
    /// the upload came; `at`: the store's time, when it said); nil when webhooks are off.
    public func playableWebhook(_ report: JobPlayable, afterSeconds: Double?, at: Date? = nil) -> OutboxEvent? {
        guard let clock = webhookClock else { return nil }
        let now = at ?? clock.now()
        return UploadEvent.playable(job: id, attempt: version, uploadID: uploadID, master: growingMaster, listedSeconds: report.seconds,
                                    afterSeconds: afterSeconds.map { ($0 * 1000).rounded() / 1000 }, at: now)
    }

    /// The webhook of `end` as the store records it (its reason's message may name where the
    /// store files the upload): `upload.published` (where it plays: `place`, this attempt's by
    /// default), `upload.rejected` or `upload.failed`; nil for an end the backend does not hear
    /// of, or when webhooks are off.
    public func webhook(_ end: JobEnd, place: PlaybackPlace? = nil) -> OutboxEvent? {
        guard let now = webhookClock?.now() else { return nil }
        switch end {
        case .published:
            return UploadEvent.published(job: id, place: place ?? self.place(), manifest: manifest, at: now)
        case .rejected(let reason), .failed(let reason):
            return UploadEvent.refused("upload.\(end.label)", job: id, uploadID: uploadID, code: reason.code, message: reason.message,
                                       attempts: reason.attempts, at: now)
        case .retried, .released:
            return nil
        }
    }
}
