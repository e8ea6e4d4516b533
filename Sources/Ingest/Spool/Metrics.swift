import Foundation

/// Daemon metrics in Prometheus text format, rewritten atomically for node_exporter's textfile
/// collector after every change.
public actor Metrics {
    private let path: String
    private var results: [String: Int] = ["published": 0, "rejected": 0, "failed": 0, "retried": 0]
    private var durationSum = 0.0
    private var durationCount = 0
    private var lastRealtimeFactor = 0.0
    private var queueDepth = 0
    private var inFlight = 0
    private var watchOverflows = 0
    private var rescanFinds = 0

    public init(path: String) { self.path = path }

    public func jobEnded(result: String, seconds: Double, realtimeFactor: Double?) {
        results[result, default: 0] += 1
        durationSum += seconds
        durationCount += 1
        if let realtimeFactor { lastRealtimeFactor = realtimeFactor }
        flush()
    }

    public func gauges(queueDepth: Int, inFlight: Int) {
        guard queueDepth != self.queueDepth || inFlight != self.inFlight else { return }
        self.queueDepth = queueDepth
        self.inFlight = inFlight
        flush()
    }

    /// inotify's queue overflowed (events were lost; the listings take over).
    public func watchOverflowed() {
        watchOverflows += 1
        flush()
    }

    /// An entry of `incoming/` was taken although inotify, watching, said nothing of it.
    public func foundByRescan() {
        rescanFinds += 1
        flush()
    }

    public func flush() {
        var lines = [
            "# HELP ingestd_jobs_total Jobs finished, by result.",
            "# TYPE ingestd_jobs_total counter",
        ]
        for (result, count) in results.sorted(by: { $0.key < $1.key }) {
            lines.append("ingestd_jobs_total{result=\"\(result)\"} \(count)")
        }
        lines += [
            "# HELP ingestd_job_duration_seconds Wall time of job attempts.",
            "# TYPE ingestd_job_duration_seconds summary",
            "ingestd_job_duration_seconds_sum \(durationSum)",
            "ingestd_job_duration_seconds_count \(durationCount)",
            "# HELP ingestd_realtime_factor Media seconds per wall second of the last published job.",
            "# TYPE ingestd_realtime_factor gauge",
            "ingestd_realtime_factor \(lastRealtimeFactor)",
            "# HELP ingestd_queue_depth Uploads waiting in incoming/ and work/.",
            "# TYPE ingestd_queue_depth gauge",
            "ingestd_queue_depth \(queueDepth)",
            "# HELP ingestd_jobs_in_flight Jobs being transcoded now.",
            "# TYPE ingestd_jobs_in_flight gauge",
            "ingestd_jobs_in_flight \(inFlight)",
            "# HELP ingestd_spool_watch_overflows_total Times inotify's event queue overflowed on incoming/.",
            "# TYPE ingestd_spool_watch_overflows_total counter",
            "ingestd_spool_watch_overflows_total \(watchOverflows)",
            "# HELP ingestd_spool_rescan_found_total Uploads found only by the rescan of incoming/, with no inotify event for them (non-zero: a watcher bug).",
            "# TYPE ingestd_spool_rescan_found_total counter",
            "ingestd_spool_rescan_found_total \(rescanFinds)",
        ]
        let temporary = "\(path).tmp-\(getpid())"
        if (try? Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: temporary))) != nil {
            rename(temporary, path)
        }
    }
}
