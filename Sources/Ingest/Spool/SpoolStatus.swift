import Foundation

/// A snapshot of a spool for `ingestd status`.
public struct SpoolStatus: Codable, Sendable {
    public struct InFlight: Codable, Sendable {
        public var id: String
        public var original: String
        public var attempts: Int
        public var progress: JobProgress?
    }

    public struct Ended: Codable, Sendable {
        public var id: String
        public var state: String
        public var reason: Reason
    }

    /// Jobs by state, in the words every store uses.
    public var states: JobStoreStatus
    /// Uploads in `incoming/` plus jobs waiting in `work/` (retries, orphans).
    public var queueDepth: Int
    /// What ended and became playable in the last hour (the console's hour window, in total).
    public var lastHour: ActivityTally?
    public var inFlight: [InFlight]
    public var counts: [String: Int]
    /// The latest rejections and failures, newest first.
    public var recentFailures: [Ended]
    /// Webhook deliveries (pending, delivered, dead), when the daemon runs with `--webhook`.
    public var webhooks: OutboxStatus?

    public init(layout: SpoolLayout, recent: Int = 10) {
        let fm = FileManager.default
        let spool = Spool(layout: layout)
        let work = (try? fm.contentsOfDirectory(atPath: layout.directory(.work))) ?? []
        var inFlight: [InFlight] = []
        var waiting = 0
        for id in work.sorted() {
            let directory = layout.job(id)
            guard let record = JSONFile.read(JobRecord.self, from: "\(directory)/job.json") else { continue }
            if SpoolStore.isRunning(directory, record) {
                inFlight.append(InFlight(id: id, original: record.original, attempts: record.attempts,
                                         progress: JSONFile.read(JobProgress.self, from: "\(directory)/progress.json")))
            } else {
                waiting += 1
            }
        }
        self.inFlight = inFlight
        states = SpoolStore.status(of: layout)
        queueDepth = spool.arrivals().count + waiting
        var counts: [String: Int] = [:]
        var ended: [(Date, Ended)] = []
        for state in [SpoolLayout.State.archive, .rejected, .failed, .queued] {
            let ids = ((try? fm.contentsOfDirectory(atPath: layout.directory(state))) ?? []).filter { !$0.hasPrefix(".") }
            guard state != .queued || !ids.isEmpty else { continue }  // handed to the fleet's queue (watch --database)
            counts[state.rawValue] = ids.count
            guard state == .rejected || state == .failed else { continue }
            for id in ids {
                if let reason = JSONFile.read(Reason.self, from: "\(layout.job(id, in: state))/reason.json") {
                    ended.append((reason.at ?? .distantPast, Ended(id: id, state: state.rawValue, reason: reason)))
                }
            }
        }
        self.counts = counts
        recentFailures = ended.sorted { $0.0 > $1.0 }.prefix(recent).map(\.1)
        webhooks = OutboxStatus(layout.outbox)
    }
}
