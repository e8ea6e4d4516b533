import Foundation

/// `ingestd serve` on a free loopback port, on a spool and a CDN directory of its own, with its upload secret;
/// killed (SIGKILL) and restarted by the tests as they need.
public final class UploadServerProcess {
    public let spool: String
    public let cdn: String
    public let secretFile: String
    public let port: Int
    public let arguments: [String]
    public let log: String
    public private(set) var process: Process?
    /// A command the server runs under, by absolute path, such as `/usr/bin/faketime -f +2h`
    /// (set before a `start()`).
    public var launcher: [String] = []
    /// Fleet mode: no spool or CDN directory of its own (`arguments` name the database and bucket).
    public let fleet: Bool
    /// Added to the server's environment (S3 credentials in fleet mode).
    public let environment: [String: String]

    public static let client = "\(Paths.root)/Tests/IngestdTesting/tus_client.py"
    public static let tuspyAvailable: Bool = (try? Tool.run("python3", ["-c", "import tusclient"]))?.status == 0

    /// `secretFile`: another server's, so that both take the same links (a fleet behind one URL).
    public init(base: String, arguments: [String] = [], fleet: Bool = false, environment: [String: String] = [:], secretFile: String? = nil) throws {
        try? FileManager.default.removeItem(atPath: base)
        spool = "\(base)/spool"
        cdn = "\(base)/cdn"
        for directory in [spool, cdn] { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) }
        self.secretFile = secretFile ?? "\(base)/upload.secret"
        if secretFile == nil {
            let key = (0..<32).map { _ in UInt8.random(in: 0...255) }
            _ = FileManager.default.createFile(atPath: self.secretFile, contents: Data("upsec_\(Data(key).base64EncodedString())\n".utf8),
                                           attributes: [.posixPermissions: 0o600])
        }
        self.fleet = fleet
        self.environment = environment
        port = try PostgresServer.freePort()
        self.arguments = arguments
        log = "\(base)/serve.log"
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        try start()
    }

    public var url: String { "http://127.0.0.1:\(port)" }

    /// Starts the server and waits until `/healthz` answers.
    public func start() throws {
        let process = Process()
        let serve = ["serve", "--http", "127.0.0.1:\(port)", "--upload-secret-file", secretFile] + (fleet ? [] : ["--spool", spool]) + arguments
        process.executableURL = URL(fileURLWithPath: launcher.first ?? Paths.binary)
        process.arguments = launcher.isEmpty ? serve : launcher.dropFirst() + [Paths.binary] + serve
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        if !environment.isEmpty { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        let handle = FileHandle(forWritingAtPath: log)
        handle?.seekToEndOfFile()
        process.standardError = handle
        try process.run()
        self.process = process
        try Daemon.wait(timeout: 60, "ingestd serve to answer") {
            guard process.isRunning else { return true }
            return (try? Tool.run("curl", ["-sf", "-o", "/dev/null", "\(url)/healthz"]))?.status == 0
        }
        guard process.isRunning else {
            throw Tool.ProbeFailure(message: "ingestd serve exited: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
        }
    }

    /// kill -9, as a crash would.
    public func kill9() {
        guard let process else { return }
        Daemon.kill9(process, launched: !launcher.isEmpty)
    }

    /// Signed links for `id` (`ingestd upload-url --json`).
    public func link(_ id: String, extra: [String] = []) throws -> (upload: String, status: String) {
        let result = try Tool.run(Paths.binary, ["upload-url", "--id", id, "--server", url, "--upload-secret-file", secretFile, "--json"] + extra)
        guard result.status == 0, let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any],
              let upload = object["upload_url"] as? String, let status = object["status_url"] as? String else {
            throw Tool.ProbeFailure(message: "upload-url failed: \(result.stderr)")
        }
        return (upload, status)
    }

    /// The key in the secret file (for tokens the command would not sign, such as expired ones).
    public var secretKey: [UInt8] {
        let text = (try? String(contentsOfFile: secretFile, encoding: .utf8)) ?? ""
        return Array(Data(base64Encoded: String(text.trimmingCharacters(in: .whitespacesAndNewlines).dropFirst(6))) ?? Data())
    }

    deinit { kill9() }
}

/// The tests' tus client (`tus_client.py upload`) sending `source` in `chunk`-byte PATCHes: it
/// stops after `pauseAfter` of them and goes on once the file `go` exists (at `resumeAt`, another
/// server, when given), then prints its JSON report.
public final class PausedUpload {
    public let process = Process()
    public let go: String
    private let output = Pipe()

    public init(_ url: String, source: String, chunk: Int, pauseAfter: Int, go: String, resumeAt: String? = nil, log: String) throws {
        self.go = go
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", UploadServerProcess.client, "upload", url, source, "--chunk", "\(chunk)",
                             "--pause-after", "\(pauseAfter)", "--go", go] + (resumeAt.map { ["--resume-at", $0] } ?? [])
        process.standardOutput = output
        process.standardError = FileHandle(forWritingAtPath: log)
        try process.run()
    }

    /// What the client printed when it paused (`paused …`); waits for it.
    public func paused() -> String {
        String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
    }

    /// Lets the client go on and returns its report once it has exited.
    public func resume() -> Data {
        _ = FileManager.default.createFile(atPath: go, contents: nil)
        process.waitUntilExit()
        return output.fileHandleForReading.readDataToEndOfFile()
    }
}
