import Foundation
import Transcode

/// How a ``JobWorker`` runs, whatever its store.
public struct JobWorkerConfiguration: Sendable {
    /// Where each job is published: a directory (`CDN/<id>/`) or a bucket prefix
    /// (`s3://bucket/prefix`, see ``OutputTarget``).
    public var cdn: String
    /// Runs each attempt in a job process.
    public var runner: JobRunner
    /// The preset of jobs that carry none (the spool's), and its limits for the pre-check.
    public var preset: Preset
    /// Jobs run at once.
    public var jobs: Int
    /// How long a claim stays valid without a renewal (renewed every third of it).
    public var lease: Duration
    public var retry: RetryPolicy
    /// On SIGTERM, how long running jobs may go on before they are stopped and released.
    public var grace: Duration
    /// Claims are tried at least this often (notifications wake the worker sooner); expired
    /// leases are rescued at this pace too (or every quarter lease, if longer).
    public var poll: Duration
    /// Record a webhook event with every job's end.
    public var webhooks = false
    /// The clock webhook events are stamped with, corrected at every upkeep by the offset to
    /// the store's clock; give the same one to the webhook sender.
    public var clock = SharedClock()
    /// Where a fleet's inputs must be (``UploadsRoot``); nil for the spool, whose inputs are
    /// its own.
    public var uploads: UploadsRoot?
    /// Free space the CDN's file system must keep for this host to claim (see ``HostHealth``).
    public var minFree = FreeSpaceFloor.standard
    /// Where `s3://` inputs and an `s3://` CDN are (``RemoteStorage``).
    public var storage: (any RemoteStorage)?
    /// Where a fleet's `s3://` inputs must be (``BucketUploadsRoot``); a worker without one
    /// takes no `s3://` input.
    public var bucketUploads: BucketUploadsRoot?
    /// A worker with no uploads directory (a bucket fleet's, with no shared volume) takes `s3://`
    /// inputs only: a local path is refused, never read from wherever it points.
    public var bucketInputsOnly = false

    /// Videos are played while they are made (``OutputTarget/growsInView``); false (`--hold`,
    /// and the stores that cannot show a video before its end): nothing is visible before the end.
    public var growing = false
    /// Who may play videos no upload and no producer asked otherwise of (`--playback`): the
    /// strictest wins (``PlaybackPolicy/strictest(_:)``).
    public var playback = PlaybackPolicy.public
    /// In a bucket CDN, the object `<id>/current.json` names each published version (the
    /// spool's store); false: the store's row does (the fleet).
    public var bucketPointer = false
    /// How far ahead of their viewers shown videos are kept (``MarginGuard``).
    public var margin = MarginGuard.Policy()

    /// Where attempts' outputs go (``OutputTargets``).
    public func outputTarget() -> any OutputTarget {
        OutputTargets.make(cdn: cdn, growing: growing, storage: storage, pointer: bucketPointer)
    }

    public init(cdn: String, runner: JobRunner, preset: Preset, jobs: Int, lease: Duration = .seconds(60),
                retry: RetryPolicy, grace: Duration, poll: Duration = .seconds(1)) {
        self.cdn = cdn
        self.runner = runner
        self.preset = preset
        self.jobs = jobs
        self.lease = lease
        self.retry = retry
        self.grace = grace
        self.poll = poll
    }
}
