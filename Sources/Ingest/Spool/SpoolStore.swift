import Foundation
import Transcode
import Synchronization

/// The spool's jobs, `work/<id>/`: a job is queued while no process holds its `flock` and
/// claimed by taking it. The lock is the lease: it dies with its holder, so a dead worker's
/// jobs are claimable at once and ``rescue(now:)`` has nothing to do. Every claim writes a
/// larger token into `job.json`; an end is filed, after its event (`events.ndjson`) and webhook
/// (the outbox), by renaming the job directory into `archive/`, `rejected/` or `failed/`.
/// The archived `job.json` records where the video plays (``PlaybackPlace``), as the target
/// that published it said.
public final class SpoolStore: JobStore {
    public let spool: Spool
    let events: EventLog
    let outbox: Outbox?
    /// The locks of the jobs this process holds, by id.
    let held = Mutex<[String: JobLock]>([:])
    /// What the intake handed over (``take(_:_:)``) and whom it wakes.
    let handedOver = Mutex(HandedOver())

    public init(layout: SpoolLayout, outbox: Outbox? = nil) {
        spool = Spool(layout: layout)
        events = EventLog(path: layout.events)
        self.outbox = outbox
    }

    var layout: SpoolLayout { spool.layout }

    public func prepare() async throws {
        try layout.create()
        try outbox?.create()
    }

    public func listen(_ wake: @escaping @Sendable () -> Void) async { handedOver.withLock { $0.wake = wake } }

    /// What the intake handed over first, then jobs in `work/` that no one holds and are due
    /// (a dead daemon's, a retry's, one not handed over).
    public func claim(limit: Int) async throws -> [ClaimedJob] {
        var claimed: [ClaimedJob] = []
        let handed = handedOver.withLock { $0.next(limit) }
        for (initial, lock) in handed + spool.adoptOrphans(limit: limit - handed.count) {
            guard !layout.isDeleted(initial.id) else {
                lock.release()  // deleted: never runs; its deletion removes it
                continue
            }
            var record = initial
            record.token = (record.token ?? 0) + 1
            do {
                try spool.update(record)
            } catch where !claimed.isEmpty {
                break  // this one's lock goes with it; what is claimed is run
            }
            held.withLock { $0[record.id] = lock }
            try? FileManager.default.removeItem(atPath: Self.playableRecord(layout, record.id))  // a killed attempt's
            events.append("attempt", record.id, ["attempt": record.attempts + 1, "token": record.token!, "pid": Int(getpid())])
            claimed.append(ClaimedJob(id: record.id, token: record.token!, attempt: record.attempts + 1,
                                      input: .soleEntry(of: layout.upload(record.id)), directory: layout.job(record.id),
                                      playback: record.playback))
        }
        handedOver.withLock { $0.wanted = claimed.count < limit }
        return claimed
    }

    /// See ``Spool/admit(_:)``.
    public func enqueue(_ jobs: [NewJob]) async throws {
        for job in jobs { try spool.admit(job) }
    }

    public func renew(_ job: ClaimedJob) async throws -> Bool { try holds(job) != nil }

    /// The job's record while this process holds its lock, `job`'s token is the latest and the
    /// job was not deleted (the deletion's fence); nil when it does not. A record that cannot be read (too many open files, an I/O error) is
    /// an error, not a lost job: while the lock is held no one else can take or file the job,
    /// so the worker retries as it would a store that does not answer.
    func holds(_ job: ClaimedJob) throws -> JobRecord? {
        guard held.withLock({ $0[job.id] != nil }), !layout.isDeleted(job.id) else { return nil }
        let path = "\(layout.job(job.id))/job.json"
        let record: JobRecord
        do {
            record = try JSONFile.load(JobRecord.self, from: path)
        } catch {
            throw IngestError.cannotRead(path: path, reason: "\(error)")
        }
        return record.token == job.token ? record : nil
    }

    /// Shows a growing attempt's video while this process holds the job and its token is the
    /// latest; the event (`playable`, with `playableAfterSeconds` from the upload's arrival) and
    /// the `upload.playable` webhook follow.
    public func playable(_ job: ClaimedJob, output: AttemptOutput, target: any OutputTarget, _ report: JobPlayable) async throws -> Bool {
        try await DeletionFence(layout: layout).shared { try await show(job, output: output, target: target, report) }
    }

    /// ``playable(_:output:target:_:)`` once no deletion can record its tombstone meanwhile.
    private func show(_ job: ClaimedJob, output: AttemptOutput, target: any OutputTarget, _ report: JobPlayable) async throws -> Bool {
        guard let record = try holds(job), try await target.show(output) else { return false }
        let after = report.at.timeIntervalSince(record.receivedAt)
        let shown = target.place(output)
        do {
            // Its webhook, as every other, is recorded, or the video is not shown (at least once).
            try output.playableWebhook(report, place: shown, afterSeconds: after).map { try outbox?.record($0) }
        } catch {
            try? await target.withdraw(output)
            throw error
        }
        events.append("playable", job.id, ["output": shown.recorded, "listedSeconds": report.seconds,
                                           "playableAfterSeconds": (after * 1000).rounded() / 1000,
                                           "stages": report.stages(received: record.receivedAt, shown: Date())])
        // For `status --job`, until the attempt ends.
        try? JSONFile.write(ShownVideo(place: shown, shownAt: Date(), playback: output.playback), to: Self.playableRecord(layout, job.id))
        return true
    }

    /// What `work/<id>/shown.json` says: where the running attempt's video plays.
    struct ShownVideo: Codable {
        var place: PlaybackPlace
        /// When it was shown (nil from an earlier version).
        var shownAt: Date?
        /// Who may play it (nil from an earlier version: public).
        var playback: PlaybackPolicy?
    }

    /// `work/<id>/shown.json`: the running attempt's video is shown (``playable(_:output:target:_:)``).
    static func playableRecord(_ layout: SpoolLayout, _ id: String) -> String { "\(layout.job(id))/shown.json" }

    public func abandon(_ job: ClaimedJob) async {
        held.withLock { $0.removeValue(forKey: job.id) }?.release()
    }

    public func rescue(now: Date) async throws -> [ExpiredAttempt] { [] }

    /// Whether job `record`, in `work/` at `directory`, runs: a claim gave it a token and a live
    /// process holds its lock (one the intake handed over holds it before its first claim).
    static func isRunning(_ directory: String, _ record: @autoclosure () -> JobRecord?) -> Bool {
        JobLock.isHeld(directory: directory) && record()?.token != nil
    }

    public func status() async throws -> JobStoreStatus { Self.status(of: layout) }

    /// Deleted videos: their tombstones.
    static func deletedCount(_ layout: SpoolLayout) -> Int { visibleEntries(layout.deleted).filter { $0.hasSuffix(".json") }.count }

    /// Queued: unlocked in `work/`, or waiting in `incoming/`; running: locked in `work/`.
    public static func status(of layout: SpoolLayout) -> JobStoreStatus {
        func count(_ state: SpoolLayout.State) -> Int { visibleEntries(layout.directory(state)).count }
        let work = visibleEntries(layout.directory(.work))
        let running = work.filter { isRunning(layout.job($0), JSONFile.read(JobRecord.self, from: "\(layout.job($0))/job.json")) }.count
        return JobStoreStatus(queued: work.count - running + visibleEntries(layout.incoming).count, running: running,
                              published: count(.archive), rejected: count(.rejected), failed: count(.failed), deleted: deletedCount(layout))
    }

    public func progress(_ job: ClaimedJob, _ progress: JobProgress) async {
        events.append("progress", job.id, ["fraction": progress.fraction, "speed": progress.speed])
    }

    static func visibleEntries(_ directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { !$0.hasPrefix(".") }
    }
}
