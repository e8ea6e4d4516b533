import Foundation
import Prometheus
import Synchronization

/// A worker's metrics in one Prometheus registry, whatever its store: served on `/metrics`
/// (`--http`) and, for the spool, rewritten atomically into `metrics.prom` after every change
/// (node_exporter's textfile collector). Jobs are counted by ``JobEnd/label``.
public final class WorkerMetrics: Sendable {
    public let registry = PrometheusCollectorRegistry()
    private let textfile: String?
    private let duration: ValueHistogram
    private let realtime: ValueHistogram
    private let depth: Gauge
    private let running: Gauge
    private let leaseLosses: Counter
    private let watchOverflows: Counter
    private let rescanFinds: Counter
    private let hostReadyGauge: Gauge
    private let cdnFreeGauge: Gauge
    private let scratchFreeGauge: Gauge
    private let clockOffsetGauge: Gauge
    private let marginGauge: Gauge
    private let ranShortCounter: Counter
    private let lastReachable = Mutex(ContinuousClock.now - .seconds(3600))
    /// Why the last call to the job store failed, until one succeeds.
    private let storeProblem = Mutex<String?>(nil)
    /// Why the host claims nothing now, if it does not.
    private let hostProblem = Mutex<String?>(nil)
    /// One writer of the textfile at a time, so an older snapshot never replaces a newer one.
    private let writing = Mutex(())

    /// `textfile`: where to keep a copy of the exposition (the spool's `metrics.prom`).
    public init(textfile: String? = nil) {
        self.textfile = textfile
        duration = registry.makeValueHistogram(
            descriptor: .init(namespace: "ingestd", metricName: "job_duration", unitName: "seconds",
                              helpText: "Wall time of a job attempt"),
            labels: [], buckets: [1, 2, 5, 10, 20, 30, 60, 120, 300, 600])
        realtime = registry.makeValueHistogram(
            descriptor: .init(namespace: "ingestd", metricName: "job_realtime", unitName: "factor",
                              helpText: "Seconds of video transcoded per second of wall time"),
            labels: [], buckets: [0.25, 0.5, 1, 2, 4, 8, 16])
        depth = registry.makeGauge(descriptor: .init(namespace: "ingestd", metricName: "queue", unitName: "depth",
                                                     helpText: "Jobs waiting to be claimed"), labels: [])
        running = registry.makeGauge(descriptor: .init(namespace: "ingestd", metricName: "jobs", unitName: "in_flight",
                                                       helpText: "Jobs this worker runs now"), labels: [])
        leaseLosses = registry.makeCounter(descriptor: .init(namespace: "ingestd", metricName: "lease_losses", unitName: "total",
                                                             helpText: "Leases that expired (rescued) or were lost by this worker"),
                                           labels: [])
        watchOverflows = registry.makeCounter(
            descriptor: .init(namespace: "ingestd", metricName: "spool_watch_overflows", unitName: "total",
                              helpText: "Times inotify's event queue overflowed on incoming/"), labels: [])
        rescanFinds = registry.makeCounter(
            descriptor: .init(namespace: "ingestd", metricName: "spool_rescan_found", unitName: "total",
                              helpText: "Uploads found only by the rescan of incoming/, with no inotify event for them (non-zero: a watcher bug)"),
            labels: [])
        hostReadyGauge = registry.makeGauge(
            descriptor: .init(namespace: "ingestd", metricName: "host", unitName: "ready",
                              helpText: "1 while this host may claim (its CDN root is there, writable, with --min-free free)"), labels: [])
        cdnFreeGauge = registry.makeGauge(
            descriptor: .init(namespace: "ingestd", metricName: "cdn_free", unitName: "bytes",
                              helpText: "Free bytes on the CDN root's file system"), labels: [])
        scratchFreeGauge = registry.makeGauge(
            descriptor: .init(namespace: "ingestd", metricName: "scratch_free", unitName: "bytes",
                              helpText: "Free bytes on the job processes' scratch file system (TMPDIR), when it is not the CDN's"), labels: [])
        clockOffsetGauge = registry.makeGauge(
            descriptor: .init(namespace: "ingestd", metricName: "clock_offset", unitName: "seconds",
                              helpText: "The job store's clock minus this host's (the database's now(); 0 for the spool)"), labels: [])
        marginGauge = registry.makeGauge(
            descriptor: .init(namespace: "ingestd", metricName: "shown_margin", unitName: "seconds",
                              helpText: "Smallest margin of the videos shown while they grow: seconds listed ahead of their earliest viewer (NaN: none grows in view)"),
            labels: [])
        marginGauge.set(.nan)
        ranShortCounter = registry.makeCounter(
            descriptor: .init(namespace: "ingestd", metricName: "shown_ran_short", unitName: "total",
                              helpText: "Shown videos whose earliest viewer caught up with what they listed (a stall)"), labels: [])
        for result in JobEnd.labels { _ = jobs(result) }
        flush()
    }

    private func jobs(_ result: String) -> Counter {
        registry.makeCounter(descriptor: .init(namespace: "ingestd", metricName: "jobs", unitName: "total",
                                               helpText: "Job attempts by how they ended"),
                             labels: [("result", result)])
    }

    func jobEnded(result: String, seconds: Double, realtimeFactor: Double?) {
        jobs(result).increment()
        duration.record(seconds)
        if let realtimeFactor { realtime.record(realtimeFactor) }
        flush()
    }

    /// Videos deleted so far, by ``DeletionCode`` (the store's tombstones, counted at upkeep).
    func deletedVideos(_ counts: [DeletionCode: Int]) {
        for code in DeletionCode.allCases {
            registry.makeGauge(descriptor: .init(namespace: "ingestd", metricName: "videos_deleted", unitName: "",
                                                 helpText: "Videos deleted (tombstones), by reason code"),
                               labels: [("code", code.rawValue)]).set(Double(counts[code] ?? 0))
        }
        flush()
    }

    func queueDepth(_ count: Int) {
        depth.set(Double(count))
        flush()
    }

    func inFlight(_ count: Int) {
        running.set(Double(count))
        flush()
    }

    func leasesLost(_ count: Int) {
        leaseLosses.increment(by: Int64(count))
        flush()
    }

    func watchOverflowed() {
        watchOverflows.increment()
        flush()
    }

    func foundByRescan() {
        rescanFinds.increment()
        flush()
    }

    func hostReady(_ ready: Bool, why: String?) {
        let changed = hostProblem.withLock { old in
            defer { old = why }
            return old != why
        }
        guard changed else { return }
        hostReadyGauge.set(Double(ready ? 1 : 0))
        flush()
    }

    func cdnFree(_ bytes: Int64) { cdnFreeGauge.set(Double(bytes)) }

    func scratchFree(_ bytes: Int64) { scratchFreeGauge.set(Double(bytes)) }

    func clockOffset(_ seconds: Double) { clockOffsetGauge.set(seconds) }

    /// The smallest margin of a shown video (nil: none grows in view), and how many more ran short.
    func shownMargin(_ seconds: Double?, ranShort: Int) {
        marginGauge.set(seconds ?? .nan)
        guard ranShort > 0 else { return }
        ranShortCounter.increment(by: Int64(ranShort))
        flush()
    }

    func storeReachable() {
        lastReachable.withLock { $0 = .now }
        storeProblem.withLock { $0 = nil }
    }

    func storeUnreachable(_ why: String) { storeProblem.withLock { $0 = why } }

    /// Why this worker is not ready (`/readyz` 503): its host claims nothing, the job store's
    /// last call failed, or it has not answered within `window`; nil when it is ready.
    public func notReady(within window: Duration) -> String? {
        if let problem = hostProblem.withLock({ $0 }) { return "host not ready: \(problem)" }
        if let problem = storeProblem.withLock({ $0 }) { return "job store unreachable: \(problem)" }
        return lastReachable.withLock { ContinuousClock.now - $0 <= window } ? nil : "job store unreachable"
    }

    private func flush() {
        guard let textfile else { return }
        writing.withLock { _ in
            let temporary = "\(textfile).tmp-\(getpid())"
            if (try? Data(registry.emitToString().utf8).write(to: URL(fileURLWithPath: temporary))) != nil {
                rename(temporary, textfile)
            }
        }
    }
}
