import Foundation

/// An HTTP proxy the test controls in front of a real server (`http_fault_proxy.py`): it
/// forwards requests untouched, and answers the next ``fail(_:status:)`` ones itself with an
/// error status (S3's `SlowDown`), as an overloaded storage service does.
public final class HTTPFaultProxy {
    public let port: Int
    private let state: String
    private let process = Process()

    public init(target: Int) throws {
        port = try PostgresServer.freePort()
        state = Paths.scratch("http-proxy-\(port).json")
        try Data(#"{"fail": 0}"#.utf8).write(to: URL(fileURLWithPath: state))
        try? FileManager.default.removeItem(atPath: state + ".log")
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "\(Paths.root)/Tests/IngestdTesting/http_fault_proxy.py", "\(port)", "\(target)", state]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        try Daemon.wait(timeout: 20, "the HTTP proxy to listen") { Self.answers(self.port) }
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// The next `count` requests are answered with `status` and never reach the server.
    public func fail(_ count: Int, status: Int = 503) throws {
        try Data(#"{"fail": \#(count), "status": \#(status)}"#.utf8).write(to: URL(fileURLWithPath: state))
    }

    /// Requests whose `METHOD PATH` starts with `match` wait `seconds` before they are forwarded.
    /// Holds requests whose "METHOD PATH" starts with `match` until the file `release` exists.
    public func hold(matching match: String, until release: String) throws {
        try Data(#"{"fail": 0, "hold": "\#(release)", "match": "\#(match)"}"#.utf8).write(to: URL(fileURLWithPath: state))
    }

    public func delay(_ seconds: Double, matching match: String) throws {
        try Data(#"{"fail": 0, "delay": \#(seconds), "match": "\#(match)"}"#.utf8).write(to: URL(fileURLWithPath: state))
    }

    /// How a lying server frames a GET's body (see `http_fault_proxy.py`).
    public enum BodyFraming: String, Sendable {
        /// No `Content-Length`: chunked transfer encoding.
        case chunked
        /// No `Content-Length`, no chunks: the body ends when the connection closes.
        case unframed
        /// `Content-Length` says less than is sent.
        case understate
        /// Chunked, and the object's bytes repeated for ever.
        case endless
    }

    /// GETs whose `METHOD PATH` starts with `match` get the server's bytes framed as `framing`
    /// says (`declare`: the `Content-Length` an understating server announces).
    public func lie(_ framing: BodyFraming, matching match: String, declare: Int = 0) throws {
        try Data(#"{"fail": 0, "body": "\#(framing.rawValue)", "match": "\#(match)", "declare": \#(declare)}"#.utf8)
            .write(to: URL(fileURLWithPath: state))
    }

    /// Bytes of body a lying server sent per request (`METHOD PATH`), in order.
    public var liedBytes: [(request: String, sent: Int)] {
        requests.compactMap { line in
            guard let range = line.range(of: " sent="), let sent = Int(line[range.upperBound...]) else { return nil }
            return (String(line.split(separator: " ").prefix(2).joined(separator: " ")), sent)
        }
    }

    /// Every request answered so far: `METHOD PATH STATUS[ injected]`.
    public var requests: [String] { log.filter { !$0.hasSuffix(" started") } }

    /// Every request that arrived so far: `METHOD PATH`.
    public var arrived: [String] { log.filter { $0.hasSuffix(" started") }.map { String($0.dropLast(" started".count)) } }

    private var log: [String] {
        ((try? String(contentsOfFile: state + ".log", encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    private static func answers(_ port: Int) -> Bool {
        (try? Tool.run("curl", ["-s", "-o", "/dev/null", "--max-time", "2", "http://127.0.0.1:\(port)/"]))?.status == 0
    }
}
