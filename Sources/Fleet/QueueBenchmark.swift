import Foundation
import Logging
import Ingest
import PostgresNIO

/// What `Benchmarks/queue.sh` measures through the real queue code: claim → heartbeat → fenced
/// publish of no-op jobs by many concurrent claimers, claim latency, the pickup latency of an
/// idle listener, and the claim query's plan on a large queue.
public enum QueueBenchmark {
    public struct Throughput: Codable, Sendable {
        public var jobs: Int
        public var claimers: Int
        public var seconds: Double
        public var jobsPerSecond: Double
        public var claimP50Milliseconds: Double
        public var claimP99Milliseconds: Double
    }

    /// Queues `jobs` no-op jobs, then `claimers` tasks each claim, heartbeat and publish (fenced,
    /// nothing renamed) until the queue is empty.
    public static func throughput(_ queue: JobQueue, jobs: Int, claimers: Int, logger: Logger) async throws -> Throughput {
        let prefix = "bench-\(UInt32.random(in: 0...UInt32.max))-"
        try await queue.client.query("""
            INSERT INTO ingestd_jobs (id, state, input, preset)
            SELECT \(prefix) || n, 'queued', '/dev/null', '{}' FROM generate_series(1, \(jobs)) AS n
            """, logger: logger)
        let started = ContinuousClock.now
        let latencies = try await withThrowingTaskGroup(of: [Double].self) { group in
            for index in 0..<claimers {
                group.addTask {
                    var measured: [Double] = []
                    while true {
                        let before = ContinuousClock.now
                        guard let claim = try await queue.claim(worker: "bench/\(index)", lease: .seconds(30)) else { return measured }
                        measured.append((ContinuousClock.now - before).seconds * 1000)
                        _ = try await queue.heartbeat(claim, lease: .seconds(30))
                        try await queue.publish(claim, manifest: "{}") { PlaybackPlace(root: "/dev", id: "null") }
                    }
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }.sorted()
        }
        let seconds = (ContinuousClock.now - started).seconds
        func percentile(_ p: Double) -> Double {
            latencies.isEmpty ? 0 : latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))]
        }
        return Throughput(jobs: latencies.count, claimers: claimers, seconds: seconds, jobsPerSecond: Double(latencies.count) / seconds,
                          claimP50Milliseconds: percentile(0.5), claimP99Milliseconds: percentile(0.99))
    }

    /// Milliseconds from `enqueue` to a claim by a claimer that was idle on LISTEN, `rounds` times.
    public static func pickup(_ queue: JobQueue, rounds: Int, logger: Logger) async throws -> [Double] {
        let (wakeups, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let listener = Task {
            try await queue.client.withConnection { connection in
                try await connection.listen(on: JobQueue.channel) { notifications in
                    wake.yield()
                    for try await _ in notifications { wake.yield() }
                }
            }
        }
        defer { listener.cancel() }
        var iterator = wakeups.makeAsyncIterator()
        _ = await iterator.next()  // listening
        var measured: [Double] = []
        for round in 0..<rounds {
            try await Task.sleep(for: .milliseconds(100))
            let submitted = ContinuousClock.now
            try await queue.enqueue([.init(id: "pickup-\(UInt32.random(in: 0...UInt32.max))-\(round)", input: .path("/dev/null"), preset: "{}")])
            while true {
                _ = await iterator.next()
                if let claim = try await queue.claim(worker: "bench/pickup", lease: .seconds(30)) {
                    measured.append((ContinuousClock.now - submitted).seconds * 1000)
                    try await queue.publish(claim, manifest: "{}") { PlaybackPlace(root: "/dev", id: "null") }
                    break
                }
            }
        }
        return measured
    }

    /// The plan of the claim's inner SELECT with `rows` queued jobs in the table (added first).
    public static func claimPlan(_ queue: JobQueue, rows: Int, logger: Logger) async throws -> String {
        try await queue.client.query("""
            INSERT INTO ingestd_jobs (id, state, input, preset, run_at)
            SELECT 'plan-' || n, 'queued', '/dev/null', '{}', now() + make_interval(secs => n % 1000)
              FROM generate_series(1, \(rows)) AS n
            """, logger: logger)
        try await queue.client.query("ANALYZE ingestd_jobs", logger: logger)
        var lines: [String] = []
        for try await line in try await queue.client.query("""
            EXPLAIN SELECT id FROM ingestd_jobs WHERE state = 'queued' AND run_at <= now()
             ORDER BY run_at, id LIMIT 1 FOR UPDATE SKIP LOCKED
            """, logger: logger).decode(String.self) {
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }
}
