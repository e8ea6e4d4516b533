import Foundation

/// Where jobs wait and how their ends are recorded: everything of a job's lifecycle that
/// depends on the storage, and nothing else (the rest is ``JobWorker``'s, once). Two stores:
/// ``SpoolStore`` (directories, `flock`, the attempt count on disk) and the fleet's
/// `PostgresStore` (`SKIP LOCKED` claims, leases, `NOTIFY`). As in River or Oban, the store
/// is the engine and the worker the lifecycle.
public protocol JobStore: Sendable {
    /// Makes the store usable (directories, schema); called once before the first claim.
    func prepare() async throws
    /// Calls `wake` whenever new work may be due, until cancelled (LISTEN/NOTIFY); the worker
    /// also polls, so a store without notifications returns at once.
    func listen(_ wake: @escaping @Sendable () -> Void) async
    /// Queues new jobs (``Submitter`` is the one door to it); an id already there is left as it is.
    func enqueue(_ jobs: [NewJob]) async throws
    /// Claims up to `limit` due jobs, each with a new fencing token.
    func claim(limit: Int) async throws -> [ClaimedJob]
    /// Extends the job's lease; false when the token no longer holds (the job was given away).
    func renew(_ job: ClaimedJob) async throws -> Bool
    /// Records how the attempt ended, only while its token holds, and returns whether it did.
    /// For ``JobEnd/published`` the output is put in view (``OutputTarget/publish(_:)``) after
    /// the token was checked and before the end is recorded, while no other attempt can take
    /// the job; a throw from it records nothing. The output's webhook for the end, as the store
    /// records it, is recorded with the end (delivered at least once).
    func finish(_ job: ClaimedJob, _ end: JobEnd, output: AttemptOutput, target: any OutputTarget) async throws -> Bool
    /// A growing attempt's ladder can be played (``JobRunner``'s report): shows it
    /// (``OutputTarget/show(_:)``) under the job's fence and records it (event, the
    /// `upload.playable` webhook). False when the attempt no longer holds the job, the video is
    /// shown otherwise, or the store shows no video before it ends.
    func playable(_ job: ClaimedJob, output: AttemptOutput, target: any OutputTarget, _ report: JobPlayable) async throws -> Bool

    /// Returns jobs whose lease ran out to the queue (ending those out of attempts as failed);
    /// returns the attempts that lost them.
    func rescue(now: Date) async throws -> [ExpiredAttempt]
    /// How many jobs are in each state.
    func status() async throws -> JobStoreStatus
    /// What job `id` is now (state, attempts, progress, reason, output); nil when the store has
    /// no such job.
    func job(_ id: String) async throws -> JobSnapshot?
    /// Jobs waiting to be claimed (the queue-depth metric, measured at every upkeep).
    func depth() async throws -> Int
    /// Notes an attempt's progress where operators read it (the spool's event log).
    func progress(_ job: ClaimedJob, _ progress: JobProgress) async
    /// The store's clock minus this host's, in seconds, measured now; nil when the store keeps
    /// no clock of its own (the spool: this host's is the only one).
    func clockOffset() async throws -> Double?
    /// This host found the job's input missing although its uploads root checks out: says
    /// whether that is confirmed (the upload is then rejected) or may be this host's view alone
    /// (a stale network file system cache, a missing sub-mount: the job is then released for
    /// another host to try). Recorded only while the attempt holds the job.
    func inputMissing(_ job: ClaimedJob, host: String) async throws -> MissingInput
    /// Lets go of a job this worker holds but will record nothing for (its lease was lost, or
    /// recording its end was given up): the spool's lock goes, as if the holder had died; the
    /// queue's lease simply runs out.
    func abandon(_ job: ClaimedJob) async
    /// An operator's retry: each of `ids` that is `failed` (or `rejected`, with `rejected`: the
    /// limits changed) goes back to `queued` with its attempts reset, the retry recorded in its
    /// events. Fenced on the state: a job in any other state (retried already, published, never
    /// ended) is left as it is. Returns the ids retried.
    func retry(_ ids: [String], rejected: Bool) async throws -> [String]
    /// This worker's heartbeat, at every upkeep, where operators read it (the queue's
    /// `ingestd_hosts`); the spool has one host, and records none.
    func beat(ready: Bool, problem: String?, running: Int) async throws
}

extension JobStore {
    /// Gives the job back without charging an attempt (drain, host not ready).
    public func release(_ job: ClaimedJob, target: any OutputTarget) async throws -> Bool {
        try await finish(job, .released, output: .none(job), target: target)
    }

    public func progress(_ job: ClaimedJob, _ progress: JobProgress) async {}

    public func abandon(_ job: ClaimedJob) async {}

    public func playable(_ job: ClaimedJob, output: AttemptOutput, target: any OutputTarget, _ report: JobPlayable) async throws -> Bool { false }

    public func clockOffset() async throws -> Double? { nil }

    public func beat(ready: Bool, problem: String?, running: Int) async throws {}

    /// A store on one host (the spool, whose inputs are its own) has no other host to ask.
    public func inputMissing(_ job: ClaimedJob, host: String) async throws -> MissingInput { .confirmed(note: nil) }

    public func depth() async throws -> Int { try await status().queued }
}

/// Whether a missing input is the upload's fault (``JobStore/inputMissing(_:host:)``).
public enum MissingInput: Sendable, Equatable {
    /// Missing for good; `note` says who found it so (added to the rejection's message).
    case confirmed(note: String?)
    /// Perhaps this host's view alone: the job goes back uncharged for another host to try.
    case unconfirmed
}

/// An error of a store that may say whether retrying the same write can ever succeed.
public protocol StoreRefusal: Error {
    /// True when the store refused the values themselves (retrying cannot help).
    var isPermanent: Bool { get }
    /// True when the store refuses this client (credentials, a missing database): a worker
    /// that has never reached its store stops rather than retrying for ever.
    var isConfiguration: Bool { get }
}

extension StoreRefusal {
    public var isConfiguration: Bool { false }
}

/// Jobs by state, in ``JobEnd``'s words plus the two live states (`status --json`'s `states`).
public struct JobStoreStatus: Sendable, Equatable, Codable {
    /// Waiting to be claimed (due or backing off).
    public var queued: Int
    public var running: Int
    public var published: Int
    public var rejected: Int
    public var failed: Int
    /// Deleted videos (their tombstones).
    public var deleted: Int

    public init(queued: Int = 0, running: Int = 0, published: Int = 0, rejected: Int = 0, failed: Int = 0, deleted: Int = 0) {
        self.queued = queued
        self.running = running
        self.published = published
        self.rejected = rejected
        self.failed = failed
        self.deleted = deleted
    }

    enum CodingKeys: String, CodingKey { case queued, running, published, rejected, failed, deleted }

    /// Reads a count from before deletions (no `deleted`) too.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func count(_ key: CodingKeys) throws -> Int { try container.decodeIfPresent(Int.self, forKey: key) ?? 0 }
        self.init(queued: try count(.queued), running: try count(.running), published: try count(.published),
                  rejected: try count(.rejected), failed: try count(.failed), deleted: try count(.deleted))
    }

    /// The count of jobs in `state`.
    public subscript(_ state: JobSnapshot.State) -> Int {
        get {
            switch state {
            case .queued: queued
            case .running: running
            case .published: published
            case .rejected: rejected
            case .failed: failed
            case .deleted: deleted
            }
        }
        set {
            switch state {
            case .queued: queued = newValue
            case .running: running = newValue
            case .published: published = newValue
            case .rejected: rejected = newValue
            case .failed: failed = newValue
            case .deleted: deleted = newValue
            }
        }
    }

    /// `jobs: queued 1, running 2, published 3, rejected 0, failed 0, deleted 0`, for `status`.
    public var line: String {
        "jobs: queued \(queued), running \(running), published \(published), rejected \(rejected), failed \(failed), deleted \(deleted)"
    }
}
