import Foundation
import Prometheus
import Synchronization

/// The worker's metrics in a Prometheus registry (served on `/metrics`): jobs by result, job
/// duration and realtime factor, queue depth, jobs in flight, lease losses.
public final class FleetMetrics: Sendable {
    public let registry = PrometheusCollectorRegistry()
    private let duration: ValueHistogram
    private let realtime: ValueHistogram
    private let depth: Gauge
    private let running: Gauge
    private let leaseLosses: Counter
    private let lastReachable = Mutex(ContinuousClock.now - .seconds(3600))

    public init() {
        duration = registry.makeValueHistogram(
            descriptor: .init(namespace: "ingestd", metricName: "job_duration", unitName: "seconds",
                              helpText: "Wall time of a job attempt"),
            labels: [], buckets: [1, 2, 5, 10, 20, 30, 60, 120, 300, 600])
        realtime = registry.makeValueHistogram(
            descriptor: .init(namespace: "ingestd", metricName: "job_realtime", unitName: "factor",
                              helpText: "Seconds of video transcoded per second of wall time"),
            labels: [], buckets: [0.25, 0.5, 1, 2, 4, 8, 16])
        depth = registry.makeGauge(descriptor: .init(namespace: "ingestd", metricName: "queue", unitName: "depth",
                                                     helpText: "Jobs queued in the database"), labels: [])
        running = registry.makeGauge(descriptor: .init(namespace: "ingestd", metricName: "jobs", unitName: "in_flight",
                                                       helpText: "Jobs this worker runs now"), labels: [])
        leaseLosses = registry.makeCounter(descriptor: .init(namespace: "ingestd", metricName: "lease_losses", unitName: "total",
                                                             helpText: "Leases that expired (rescued) or were lost by this worker"),
                                           labels: [])
        for result in ["published", "rejected", "failed", "retried", "lease_lost"] { _ = jobs(result) }
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
    }

    func queueDepth(_ count: Int) { depth.set(Double(count)) }
    func inFlight(_ count: Int) { running.set(Double(count)) }
    func leasesLost(_ count: Int) { leaseLosses.increment(by: Int64(count)) }
    func databaseReachable() { lastReachable.withLock { $0 = .now } }

    /// Whether the database answered within `window`.
    public func isReady(within window: Duration) -> Bool {
        lastReachable.withLock { ContinuousClock.now - $0 <= window }
    }
}
