import Prometheus
import Synchronization

/// `ingestd serve`'s metrics, served on its own `/metrics`.
public final class UploadMetrics: Sendable {
    public let registry = PrometheusCollectorRegistry()
    private let bytes: Counter
    private let inProgress: Gauge
    private let resumes: Counter
    private let completed: Counter
    private let expired: Counter
    private let inFlight = Mutex(0)

    public init() {
        func name(_ metric: String, _ help: String) -> MetricNameDescriptor { .init(namespace: "ingestd", metricName: metric, unitName: "", helpText: help) }
        bytes = registry.makeCounter(descriptor: name("upload_received_bytes_total", "Upload bytes received and acknowledged"))
        inProgress = registry.makeGauge(descriptor: name("uploads_in_progress", "Requests writing upload bytes now"))
        resumes = registry.makeCounter(descriptor: name("upload_resumes_total", "PATCHes continuing an upload whose previous request broke off"))
        completed = registry.makeCounter(descriptor: name("uploads_completed_total", "Uploads whose last byte landed (each became a job)"))
        expired = registry.makeCounter(descriptor: name("uploads_expired_total", "Unfinished uploads removed when their token expired"))
    }

    func refused(_ reason: String) {
        registry.makeCounter(descriptor: .init(namespace: "ingestd", metricName: "upload_refusals_total", unitName: "", helpText: "Upload requests refused, by reason"),
                             labels: [("reason", reason)]).increment()
    }

    func received(_ count: Int64) { bytes.increment(by: Int64(count)) }
    func resumed() { resumes.increment() }
    func completedOne() { completed.increment() }
    func expired(_ count: Int) { expired.increment(by: Int64(count)) }

    /// Takes one of `limit` writer slots; false when all are taken.
    func enter(limit: Int) -> Bool {
        let taken = inFlight.withLock { count -> Int? in
            guard count < limit else { return nil }
            count += 1
            return count
        }
        guard let taken else { return false }
        inProgress.set(Double(taken))
        return true
    }

    func leave() {
        let count = inFlight.withLock { count in
            count -= 1
            return count
        }
        inProgress.set(Double(count))
    }
}
