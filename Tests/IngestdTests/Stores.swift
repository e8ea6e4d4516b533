import IngestdTesting
import Fleet
import Foundation
@testable import Ingest
import Logging
import ServiceLifecycle
import Testing
import Transcode

enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case spool, postgres
    var testDescription: String { rawValue }
}

/// Two workers' views of one real store, and the few things the contract tests do differently
/// per store.
struct Stores: Sendable {
    let kind: StoreKind
    let first: any JobStore
    let second: any JobStore
    /// `first`'s holder with a lease no busy host outlasts between renewals: what ``runWorker``
    /// runs on (`first` has the short lease the expiry tests wait out).
    let steady: any JobStore
    let cdn: String
    /// Queues a copy of a sample under `name`; returns the job's id.
    let submit: @Sendable (_ sample: String, _ name: String) async throws -> String
    /// The job's holder is gone: its process died (the spool: its flock goes) or stopped
    /// renewing until its lease ran out (the queue).
    let abandon: @Sendable (ClaimedJob, any JobStore) async throws -> Void
    /// Lets any lease run out (the spool's flock has none: nothing to wait for).
    let expireLease: @Sendable () async throws -> Void
    /// `queued`, `running`, `published`, `rejected` or `failed`.
    let state: @Sendable (String) async throws -> String
    /// How many times the store recorded the job as published.
    let publications: @Sendable (String) async throws -> Int
    /// The job's publish is recorded and its filing not yet done: the spool's window between its
    /// event and its folder's move (a crash there repeats the event); none in the queue (one
    /// transaction).
    let halfFiled: @Sendable (String) -> Bool
    /// Every event the store recorded (claims, ends), a line each: what a failure message shows.
    let journal: @Sendable () async throws -> String
    /// `ingestd` arguments that run a worker process on this store (one job at a time).
    let workerArguments: [String]

    /// A worker process on this store (`ingestd watch` or `ingestd worker`), killed when it goes.
    func startWorkerProcess() throws -> WorkerProcess { try WorkerProcess(workerArguments) }

    /// The directory CDN, nothing in view before the end (`--hold`).
    var held: StagedDirectoryTarget { StagedDirectoryTarget(root: cdn) }
    /// The directory CDN, videos played while they are made.
    var grows: GrowingDirectoryTarget { GrowingDirectoryTarget(staged: held) }

    /// An attempt's output as its job process leaves it: staged beside `CDN/<id>` under the
    /// attempt's token, with a manifest and a file naming `owner`.
    func staged(_ job: ClaimedJob, _ owner: String) throws -> AttemptOutput {
        var output = AttemptOutput(id: job.id, token: job.token)
        let staging = "\(cdn)/\(StagedDirectory.stagingPrefix(of: job.id))\(AttemptVersion.name(token: job.token))"
        try FileManager.default.createDirectory(atPath: staging, withIntermediateDirectories: true)
        try Data(owner.utf8).write(to: URL(fileURLWithPath: "\(staging)/owner"))
        try Data("{}".utf8).write(to: URL(fileURLWithPath: "\(staging)/manifest.json"))
        held.staged(&output, at: staging)
        return output
    }

    /// A growing attempt's version as its job process writes it in place (`CDN/<id>/t<token>`):
    /// a master naming one rung, and a file naming `owner`.
    func growing(_ job: ClaimedJob, _ owner: String) throws -> AttemptOutput {
        let output = AttemptOutput(id: job.id, token: job.token)
        let version = grows.writeDirectory(output, scratch: "")
        try FileManager.default.createDirectory(atPath: version, withIntermediateDirectories: true)
        try Data("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1000000\n360p/index.m3u8\n".utf8)
            .write(to: URL(fileURLWithPath: "\(version)/master.m3u8"))
        try Data(owner.utf8).write(to: URL(fileURLWithPath: "\(version)/owner"))
        return output
    }

    /// The version `CDN/<id>/master.m3u8` plays now (`t<token>`), if any.
    func shown(_ id: String) -> String? {
        (try? String(contentsOfFile: "\(cdn)/\(id)/master.m3u8", encoding: .utf8)).flatMap { VersionPointer.version(ofMaster: $0) }
    }

    func output(_ id: String) -> String? {
        FileManager.default.contents(atPath: "\(cdn)/\(id)/owner").map { String(decoding: $0, as: UTF8.self) }
    }

    /// The in-process worker's lease: renewals a loaded host delays by seconds must not lose it.
    static let steadyLease = Duration.seconds(30)

    /// Runs a ``JobWorker`` (one job at a time, real job processes) on `steady` until `running`
    /// returns, then shuts it down gracefully and waits for it.
    func runWorker(grace: Duration, whileRunning running: () async throws -> Void) async throws {
        var logger = Logger(label: "contract")
        logger.logLevel = .warning
        let runner = JobRunner(executable: Paths.binary, presetArgument: Paths.root + "/Presets/default.json", timeoutSeconds: 120,
                               limits: ChildLimits(memoryMB: 8192, cpuSeconds: 480))
        let configuration = JobWorkerConfiguration(cdn: cdn, runner: runner, preset: .builtIn, jobs: 1, lease: Self.steadyLease,
                                                   retry: RetryPolicy(maxAttempts: 3, backoff: .seconds(1)), grace: grace,
                                                   poll: .milliseconds(200))
        let worker = JobWorker(store: steady, configuration: configuration, metrics: WorkerMetrics(), logger: logger)
        let group = ServiceGroup(configuration: .init(services: [worker], logger: logger))
        // Off Swift's shared pool, as the suite's tests are: a host whose pool other suites' tools
        // hold would delay the worker's own steps (its claims, its drain) by seconds.
        let run = Task { try await PreferredExecutor.run(on: DispatchTaskExecutor.shared) { try await group.run() } }
        do {
            try await running()
        } catch {
            await group.triggerGracefulShutdown()
            throw error
        }
        await group.triggerGracefulShutdown()
        try await run.value
    }
}

/// Runs `body` on a fresh store of `kind` (a new spool; a new PostgreSQL server, lease 1 s).
func withStores(_ kind: StoreKind, _ name: String, _ body: @Sendable (Stores) async throws -> Void) async throws {
    let base = Paths.scratch("contract-\(kind)-\(name)")
    try? FileManager.default.removeItem(atPath: base)
    let cdn = "\(base)/cdn", uploads = "\(base)/uploads"
    for directory in [cdn, uploads] { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) }
    switch kind {
    case .spool:
        let layout = SpoolLayout(root: "\(base)/spool")
        let first = SpoolStore(layout: layout), second = SpoolStore(layout: layout)
        try await first.prepare()
        let spool = Spool(layout: layout)
        let stores = Stores(
            kind: kind, first: first, second: second, steady: first, cdn: cdn,
            submit: { sample, name in
                // As the intake does: renamed into incoming/, claimed into work/, unlocked.
                try Daemon.drop(Paths.sample(sample), into: layout.root, as: name)
                let arrival = try #require(spool.arrivals().first { $0.name == name })
                let (record, lock) = try #require(try spool.claim(arrival, cdn: cdn))
                lock.release()
                return record.id
            },
            abandon: { job, store in
                // As the holder's death would: its lock goes, its memory of the job stays.
                (store as? SpoolStore)?.held.withLock { $0[job.id]?.release() }
            },
            expireLease: {},
            state: { id in
                for (state, name) in [(SpoolLayout.State.archive, "published"), (.rejected, "rejected"), (.failed, "failed")]
                where FileManager.default.fileExists(atPath: layout.job(id, in: state)) { return name }
                guard FileManager.default.fileExists(atPath: layout.job(id)) else { return "missing" }
                return JobLock.isHeld(directory: layout.job(id)) ? "running" : "queued"
            },
            publications: { id in Daemon.events(layout.root).filter { $0["event"] as? String == "published" && $0["id"] as? String == id }.count },
            halfFiled: { id in FileManager.default.fileExists(atPath: "\(cdn)/\(id)/manifest.json") && FileManager.default.fileExists(atPath: layout.job(id)) },
            journal: { (try? String(contentsOfFile: layout.events, encoding: .utf8)) ?? "" },
            workerArguments: ["watch", "--spool", layout.root, "--cdn", cdn, "--jobs", "1", "--settle", "0.5", "--backoff", "0.2"])
        try await body(stores)
    case .postgres:
        let server = try PostgresServer(name: "contract-\(name)")
        try UploadsRoot(uploads).mark()  // as `submit` does
        let lease = Duration.seconds(1)
        var logger = Logger(label: "contract")
        logger.logLevel = .error
        try await DatabaseURL(server.url).withClient(logger: logger) { [logger] client in
            // The contract is about semantics, not latency: a generous deadline for a loaded test machine.
            let queue = JobQueue(client: client, logger: logger, timeout: .seconds(60))
            let first = PostgresStore(queue: queue, worker: "first", lease: lease, maxAttempts: 3, webhooks: false)
            let second = PostgresStore(queue: queue, worker: "second", lease: lease, maxAttempts: 3, webhooks: false)
            let steady = PostgresStore(queue: queue, worker: "first", lease: Stores.steadyLease, maxAttempts: 3, webhooks: false)
            try await first.prepare()
            let preset = String(decoding: Preset.builtIn.canonicalJSON(), as: UTF8.self)
            let stores = Stores(
                kind: kind, first: first, second: second, steady: steady, cdn: cdn,
                submit: { sample, name in
                    let path = "\(uploads)/\(name)"
                    try? FileManager.default.removeItem(atPath: path)
                    try FileManager.default.copyItem(atPath: Paths.sample(sample), toPath: path)
                    let id = "\(name.split(separator: ".")[0])-\(UInt32.random(in: 0...UInt32.max))"
                    try await queue.enqueue([.init(id: id, input: .path(path), preset: preset)])
                    return id
                },
                abandon: { _, _ in try await Task.sleep(for: lease + .milliseconds(500)) },
                expireLease: { try await Task.sleep(for: lease + .milliseconds(500)) },
                state: { id in
                    let rows = try await client.query("SELECT state FROM ingestd_jobs WHERE id = \(id)", logger: logger)
                    for try await state in rows.decode(String.self) { return state }
                    return "missing"
                },
                publications: { id in
                    let rows = try await client.query("SELECT count(*)::bigint FROM ingestd_job_events WHERE job_id = \(id) AND event = 'published'",
                                                      logger: logger)
                    for try await count in rows.decode(Int64.self) { return Int(count) }
                    return 0
                },
                halfFiled: { _ in false },
                journal: {
                    let rows = try await client.query("SELECT job_id, to_char(at, 'HH24:MI:SS.MS'), event, data::text FROM ingestd_job_events ORDER BY at",
                                                      logger: logger)
                    var lines: [String] = []
                    for try await (id, at, event, data) in rows.decode((String, String, String, String).self) { lines.append("\(at) \(id) \(event) \(data)") }
                    return lines.joined(separator: "\n")
                },
                workerArguments: ["worker", "--database", server.url, "--cdn", cdn, "--uploads", uploads, "--lease", "4", "--poll", "0.5", "--backoff", "0.2",
                                  "--jobs", "1"])
            try await body(stores)
        }
        _ = server
    }
}

/// A real `ingestd` worker process, killed (SIGKILL) when the value goes.
final class WorkerProcess {
    let process = Process()
    private let launched: Bool

    /// `log`: where its standard error (its log) goes; `launcher`: a command that runs the
    /// worker as its child (such as `faketime`).
    init(_ arguments: [String], log: String? = nil, launcher: [String] = []) throws {
        launched = !launcher.isEmpty
        process.executableURL = URL(fileURLWithPath: launcher.first ?? Paths.binary)
        process.arguments = launcher.dropFirst() + (launcher.isEmpty ? [] : [Paths.binary]) + arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        if let log {
            _ = FileManager.default.createFile(atPath: log, contents: nil)
            process.standardError = FileHandle(forWritingAtPath: log)
        } else {
            process.standardError = FileHandle.nullDevice
        }
        try process.run()
    }

    deinit { Daemon.kill9(process, launched: launched) }

    var pid: Int32 { process.processIdentifier }
}
