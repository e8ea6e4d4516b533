import Foundation

/// A directory CDN served as an operator serves it: Debian's nginx with
/// `deploy/nginx/ingestd-cdn.conf` included in a throwaway server on a free loopback port
/// (`nginx_cdn.py`: private prefix, pid file, logs and temporary paths; an http block with
/// Debian's defaults and an `open_file_cache`). Stopped (SIGTERM, nginx with it) when the value
/// goes. `make test-deps` installs nginx.
public final class NginxCDN: @unchecked Sendable {
    /// One request nginx answered, from its access log.
    public struct Request: Sendable {
        public var time: Double
        public var method: String
        /// The decoded, normalised path (no query).
        public var path: String
        public var status: Int
        public var bytes: Int
        public var ifNoneMatch: String?
        public var range: String?
    }

    /// `http://127.0.0.1:<port>/`: the CDN's root; a video's master is `baseURL + "<id>/master.m3u8"`.
    public let baseURL: String
    public let port: Int
    public let root: String
    private let log: String
    private let process = Process()

    /// The nginx binary, or nil when it is not installed (`apt-get install nginx`).
    public static var binary: String? {
        if FileManager.default.isExecutableFile(atPath: "/usr/sbin/nginx") { return "/usr/sbin/nginx" }
        let found = (try? Tool.run("sh", ["-c", "command -v nginx"]))?.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        return found?.isEmpty == false ? found : nil
    }

    /// Serves `root` (the daemon's `--cdn`); `directory` holds the port file and the access log.
    /// `secrets`: the playback key lines set before the include (the key's, then a previous one's).
    /// `bucket`: a bucket CDN's origin and path-style prefix, served with `deploy/nginx/ingestd-bucket.conf`.
    public init(root: String, directory: String, conf: String = "\(Paths.root)/deploy/nginx/ingestd-cdn.conf", secrets: [String] = [],
                bucket: (origin: String, prefix: String)? = nil) throws {
        guard let nginx = Self.binary else { throw Tool.ProbeFailure(message: "nginx is not installed (apt-get install nginx)") }
        self.root = root
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let portFile = "\(directory)/nginx-port"
        log = "\(directory)/nginx-access.log"
        try? FileManager.default.removeItem(atPath: portFile)
        try? FileManager.default.removeItem(atPath: log)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["\(Paths.root)/Tests/IngestdTesting/nginx_cdn.py", root, "--port-file", portFile,
                             "--access-log", log, "--conf", conf, "--nginx", nginx]
            + zip(["--playback-secret", "--playback-secret-previous"], secrets).flatMap { [$0, $1] }
            + (bucket.map { ["--bucket-origin", $0.origin, "--bucket-prefix", $0.prefix, "--conf", "\(Paths.root)/deploy/nginx/ingestd-bucket.conf"] } ?? [])
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let child = process
        let port: Int
        do {
            try Daemon.wait(timeout: 30, "nginx to serve \(root)") {
                FileManager.default.fileExists(atPath: portFile) || !child.isRunning
            }
            guard child.isRunning, let text = try? String(contentsOfFile: portFile, encoding: .utf8), let number = Int(text) else {
                let why = child.isRunning ? "wrote no port" : "exited (\(child.terminationStatus))"
                throw Tool.ProbeFailure(message: "nginx_cdn.py \(why) before serving \(root); see its standard error")
            }
            port = number
        } catch {
            // No deinit runs for an init that throws: stop the helper (and its nginx) here.
            if child.isRunning { kill(child.processIdentifier, SIGTERM) }
            child.waitUntilExit()
            throw error
        }
        self.port = port
        baseURL = "http://127.0.0.1:\(port)/"
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGTERM) }  // nginx stops, its directory goes
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning, Date() < deadline { usleep(50_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }  // nginx follows (PR_SET_PDEATHSIG)
        process.waitUntilExit()
    }

    /// `path` relative to the CDN's root as a URL string (`"abc/master.m3u8"`).
    public func url(_ path: String) -> String { baseURL + (path.hasPrefix("/") ? String(path.dropFirst()) : path) }

    /// Every request answered so far, in order.
    public var requests: [Request] {
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count >= 7, let time = Double(fields[0]), let status = Int(fields[3]) else { return nil }
            return Request(time: time, method: fields[1], path: fields[2], status: status, bytes: Int(fields[4]) ?? 0,
                           ifNoneMatch: fields[5] == "-" ? nil : fields[5], range: fields[6] == "-" ? nil : fields[6])
        }
    }
}
