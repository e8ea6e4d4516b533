import ArgumentParser
import Fleet
import Foundation

/// `Benchmarks/queue.sh`'s driver: the queue's throughput, claim and pickup latency, and the
/// claim query's plan, measured through the real queue code on a throwaway database.
struct QueueBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "queue-bench",
        abstract: "Measure the job queue (for Benchmarks/queue.sh; writes rows: use a throwaway database).",
        shouldDisplay: false
    )

    @OptionGroup var databaseOption: DatabaseOption
    @Option var jobs: Int = 5000
    @Option var claimers: Int = 16
    @Option var pickups: Int = 20
    @Option var planRows: Int = 1_000_000

    func run() async throws {
        let database = try databaseOption.resolve()
        let logger = Log.make(label: "ingestd.bench")
        let (jobs, claimers, pickups, planRows) = (jobs, claimers, pickups, planRows)
        try await database.migrate(logger: logger)
        let report = try await database.withClient(logger: logger) { client -> [String: String] in
            let queue = JobQueue(client: client, logger: logger, timeout: database.callTimeout)
            let throughput = try await QueueBenchmark.throughput(queue, jobs: jobs, claimers: claimers, logger: logger)
            let pickup = try await QueueBenchmark.pickup(queue, rounds: pickups, logger: logger).sorted()
            let plan = try await QueueBenchmark.claimPlan(queue, rows: planRows, logger: logger)
            return [
                "throughput": String(format: "%d jobs, %d claimers: %.0f jobs/s (claim→heartbeat→fenced publish), claim p50 %.2f ms, p99 %.2f ms",
                                     throughput.jobs, throughput.claimers, throughput.jobsPerSecond,
                                     throughput.claimP50Milliseconds, throughput.claimP99Milliseconds),
                "pickup": String(format: "submit → claim by an idle LISTENing claimer, %d rounds: p50 %.1f ms, max %.1f ms",
                                 pickup.count, pickup[pickup.count / 2], pickup.last ?? 0),
                "plan": "claim query with \(planRows) queued rows:\n\(plan)",
            ]
        }
        for key in ["throughput", "pickup", "plan"] { print(report[key] ?? "") }
    }
}
