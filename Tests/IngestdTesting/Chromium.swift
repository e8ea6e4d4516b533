import Foundation

/// Headless Chromium's native HLS player, driven as `make bench-3g` drives it
/// (`chromium_play.py`, on Benchmarks/lib/hls_play.py): what a phone's browser engine does with
/// a ladder. `make test-deps` installs Debian's `chromium`.
public enum Chromium {
    public static let script = "\(Paths.root)/Tests/IngestdTesting/chromium_play.py"

    /// The browser's path, or nil when it is not installed.
    public static var binary: String? {
        if FileManager.default.isExecutableFile(atPath: "/usr/lib/chromium/chromium") { return "/usr/lib/chromium/chromium" }
        let found = (try? Tool.run("sh", ["-c", "command -v chromium"]))?.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        return found?.isEmpty == false ? found : nil
    }

    /// The player page (`player.html?src=MASTER`): a muted, autoplaying video element that
    /// records its events in `window.__r`.
    public static func playerPage() throws -> String {
        let result = try Tool.run("python3", [script, "page"])
        guard result.status == 0 else { throw Tool.ProbeFailure(message: "chromium_play.py page: \(result.stderr)") }
        return result.stdout
    }

    /// Loads `page` and plays until the video ends, fails, or `timeout` seconds pass. The answer:
    /// `ended`, `error`, `timed_out`, `currentTime`, `duration`, `videoWidth`, `videoHeight`,
    /// `heights`, `failed_requests`.
    /// `until`: a growing video, which Chromium plays as live and never ends: the run also ends
    /// once `currentTime` reaches it; `frames` counts the frames presented.
    public static func play(_ page: String, timeout: Int, until: Double? = nil) throws -> [String: Any] {
        let result = try Tool.run("python3", [script, page, "\(timeout)"] + (until.map { ["\($0)"] } ?? []),
                                  environment: binary.map { ["CHROMIUM": $0] } ?? [:])
        guard result.status == 0, let answer = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any] else {
            throw Tool.ProbeFailure(message: "chromium_play.py: \(result.status) \(result.stdout) \(result.stderr)")
        }
        return answer
    }
}

/// A real `ingestd console` process on a free loopback port, with a tokens file of one
/// `operate` and one `read` token; killed when the value goes.
public final class ConsoleProcess {
    public let process = Process()
    public let port: Int
    public let operateToken = "operate-" + UUID().uuidString
    public let readToken = "read-" + UUID().uuidString
    public var base: String { "http://127.0.0.1:\(port)" }

    /// `store`: `--spool DIR` or `--database URL` (and more options, such as `--refresh`).
    public init(_ store: [String], directory: String, log: String? = nil, environment: [String: String] = [:]) throws {
        port = try PostgresServer.freePort()
        let tokens = "\(directory)/console.tokens"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: tokens, contents: Data("# console tokens\noperate \(operateToken)\nread \(readToken)\n".utf8),
                                       attributes: [.posixPermissions: 0o600])
        process.executableURL = URL(fileURLWithPath: Paths.binary)
        process.arguments = ["console", "--http", "127.0.0.1:\(port)", "--console-tokens-file", tokens] + store
        if !environment.isEmpty { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        if let log { _ = FileManager.default.createFile(atPath: log, contents: nil) }
        process.standardError = FileHandle(forWritingAtPath: log ?? "/dev/null")
        try process.run()
        let deadline = Date().addingTimeInterval(30)
        while (try? Tool.run("curl", ["-s", "-o", "/dev/null", "\(base)/healthz"]))?.status != 0 {
            guard process.isRunning, Date() < deadline else { throw Tool.ProbeFailure(message: "ingestd console did not start (\(log ?? ""))") }
            usleep(100_000)
        }
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// One request with curl (the path sent as it is, `..` included): the status and body.
    /// `token`: sent as a Bearer token.
    public func request(_ method: String, _ path: String, token: String?, headers: [String: String] = [:],
                        form: String? = nil) throws -> (status: Int, body: String) {
        var arguments = ["-s", "--path-as-is", "-X", method, "-w", "\n%{http_code}"]
        if let token { arguments += ["-H", "Authorization: Bearer \(token)"] }
        for (name, value) in headers { arguments += ["-H", "\(name): \(value)"] }
        if let form { arguments += ["--data-raw", form] }
        let result = try Tool.run("curl", arguments + ["\(base)\(path)"])
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        return (Int(lines.last ?? "") ?? 0, lines.dropLast().joined(separator: "\n"))
    }

    /// `GET path` as JSON (`Accept: application/json`), with the operate token.
    public func json(_ path: String) throws -> [String: Any] {
        let answer = try request("GET", path, token: operateToken, headers: ["Accept": "application/json"])
        guard answer.status == 200, let object = try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any] else {
            throw Tool.ProbeFailure(message: "GET \(path): \(answer.status) \(answer.body)")
        }
        return object
    }

    /// Runs `chromium_console.py` (see there): log in, retry `job` from the list and watch it
    /// publish live, a cross-site post for `cross`, a read token's controls and post.
    public func drive(job: String, cross: String, timeout: Int, shots: String) throws -> [String: Any] {
        try script([base, operateToken, readToken, job, cross, "\(timeout)", shots])
    }

    /// Deletes `job` from its page as an operator (`chromium_console.py --delete`), after a read
    /// token and a cross-site page were refused, while another tab watches the deleted view.
    public func driveDeletion(job: String, timeout: Int) throws -> [String: Any] {
        try script(["--delete", base, operateToken, readToken, job, "\(timeout)"])
    }

    /// Logs in with the read token and opens the overview (`chromium_console.py --overview`):
    /// each chart's bars summed by series, the hover titles, the summary line, a screenshot.
    public func overview(timeout: Int, shot: String) throws -> [String: Any] {
        try script(["--overview", base, readToken, "\(timeout)", shot])
    }

    /// Runs `chromium_console.py` with `arguments`: its one JSON object.
    func script(_ arguments: [String]) throws -> [String: Any] {
        let result = try Tool.run("python3", ["\(Paths.root)/Tests/IngestdTesting/chromium_console.py"] + arguments,
                                  environment: Chromium.binary.map { ["CHROMIUM": $0] } ?? [:])
        guard result.status == 0, let answer = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any] else {
            throw Tool.ProbeFailure(message: "chromium_console.py \(arguments.first ?? ""): \(result.status) \(result.stdout) \(result.stderr)")
        }
        return answer
    }

    /// The rows of a job page's attempts table as `number result` (`1 published`), by the read token.
    public func attemptRows(_ id: String) throws -> [String] {
        let page = try request("GET", "/console/jobs/\(id)", token: readToken)
        return page.body.components(separatedBy: "<tr class=\"attempt\"").dropFirst().map { row in
            let number = row.firstMatch(of: /data-number="([0-9]*)"/).map { String($0.1) } ?? ""
            let result = row.firstMatch(of: /data-result="([a-z_]*)"/).map { String($0.1) } ?? ""
            return "\(number) \(result)"
        }
    }

    /// Logs in with the read token, opens `job`'s page and plays its player (`chromium_console.py
    /// --play`): `player` (currentTime, videoHeight, src, error; nil when the page has none), `page_errors`.
    public func play(job: String, timeout: Int) throws -> [String: Any] {
        try script(["--play", base, readToken, job, "\(timeout)"])
    }
}

/// A directory served over HTTP on a free loopback port with the HLS MIME types
/// (Benchmarks/lib/hls_play.py's server), standing in for the CDN in front of `--cdn`.
public final class CDNServer {
    public let process = Process()
    public let url: String

    public init(root: String) throws {
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", """
            import sys, time; sys.dont_write_bytecode = True; sys.path.insert(0, sys.argv[2]); import hls_play
            print(hls_play.serve(sys.argv[1]).server_address[1], flush=True); time.sleep(86400)
            """, root, "\(Paths.root)/Benchmarks/lib"]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let line = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let port = Int(line) else { throw Tool.ProbeFailure(message: "the CDN server did not start: \(line)") }
        url = "http://127.0.0.1:\(port)/"
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}
