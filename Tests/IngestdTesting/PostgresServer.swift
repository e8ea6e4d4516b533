import Foundation

/// A real PostgreSQL server for the tests: a fresh cluster (a copy of one `initdb` made) in a
/// temporary directory and `pg_ctl` on a free loopback port (as the `postgres` user when the
/// tests run as root), stopped at the end.
public final class PostgresServer: @unchecked Sendable {
    public let directory: String
    public private(set) var port: Int
    public var url: String { "postgres://ingestd@127.0.0.1:\(port)/ingestd" }
    /// More server settings (`-c name=value` each) for the next ``start()``.
    public var settings: [String] = []
    private var serverOptions: String {
        (["-p \(port) -c listen_addresses=127.0.0.1 -k \(directory) -c fsync=off -c max_connections=200"] + settings.map { "-c \($0)" })
            .joined(separator: " ")
    }

    /// Debian's server binaries (`postgresql` package), or nil when none is installed.
    public static var binaries: String? {
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? [])
            .compactMap(Int.init).sorted()
        guard let version = versions.last else { return nil }
        let bin = "/usr/lib/postgresql/\(version)/bin"
        return FileManager.default.fileExists(atPath: "\(bin)/initdb") ? bin : nil
    }

    public init(name: String) throws {
        guard let bin = Self.binaries else { throw Tool.ProbeFailure(message: "PostgreSQL is not installed (apt-get install postgresql)") }
        directory = Paths.scratch("pg-\(name)")
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        port = try Self.freePort()
        if getuid() == 0 { _ = try Tool.run("chown", ["-R", "postgres:postgres", directory]) }
        let copy = try Tool.run("cp", ["-a", try Self.template.get(), "\(directory)/data"])
        guard copy.status == 0 else { throw Tool.ProbeFailure(message: "copying the template cluster: \(copy.stderr)") }
        // A port found free may be taken before the server binds it (another test's server, or
        // a connection's own local port): then the server starts again on another one.
        for launch in 1... {
            do {
                try start()
                break
            } catch where launch < 3 && ((try? String(contentsOfFile: "\(directory)/server.log", encoding: .utf8)) ?? "").contains("could not bind") {
                port = try Self.freePort()
            }
        }
        try Self.run(bin, "createdb", ["-h", "127.0.0.1", "-p", "\(port)", "-U", "ingestd", "ingestd"])
    }

    deinit { try? stop() }

    /// A cluster `initdb` made once per test run, copied for each server (`cp -a` keeps its owner
    /// and modes): a copy costs a tenth of the CPU of an `initdb`, and the tests start dozens.
    private static let template = Result<String, Error> {
        let directory = Paths.scratch("pg-template")
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        if getuid() == 0 { _ = try Tool.run("chown", ["-R", "postgres:postgres", directory]) }
        try run(binaries!, "initdb", ["-D", "\(directory)/data", "-U", "ingestd", "-A", "trust", "--no-sync", "-E", "UTF8"])
        return "\(directory)/data"
    }

    public func start() throws {
        try Self.run(Self.binaries!, "pg_ctl", ["-D", "\(directory)/data", "-l", "\(directory)/server.log", "-w", "-t", "60", "-o",
                                               serverOptions, "start"])
    }

    /// `pg_ctl restart -m immediate`: every connection is cut, as in a crash.
    public func restartImmediately() throws {
        try Self.run(Self.binaries!, "pg_ctl", ["-D", "\(directory)/data", "-l", "\(directory)/server.log", "-w", "-t", "60",
                                               "-m", "immediate", "-o", serverOptions, "restart"])
    }

    public func stop() throws {
        try Self.run(Self.binaries!, "pg_ctl", ["-D", "\(directory)/data", "-m", "immediate", "-w", "stop"])
    }

    /// Runs one SQL statement with psql and returns its unaligned output.
    public func sql(_ statement: String) throws -> String {
        let result = try Tool.run("psql", ["-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", "\(port)", "-U", "ingestd",
                                           "-d", "ingestd", "-c", statement])
        guard result.status == 0 else { throw Tool.ProbeFailure(message: "psql: \(result.stderr)") }
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Runs a server tool with every descriptor above stderr closed: Foundation's `Process`
    /// learns of an exit through a descriptor its child inherits, and the server `pg_ctl`
    /// starts would otherwise keep it open (the test would wait for the server to stop).
    private static func run(_ bin: String, _ tool: String, _ arguments: [String]) throws {
        let closeInherited = #"for fd in /proc/$$/fd/*; do n=${fd##*/}; [ "$n" -gt 2 ] && eval "exec $n>&-"; done; exec "$@""#
        let command = (getuid() == 0 ? ["runuser", "-u", "postgres", "--"] : []) + ["\(bin)/\(tool)"] + arguments
        let result = try Tool.run("/bin/bash", ["-c", closeInherited, "bash"] + command)
        guard result.status == 0 else { throw Tool.ProbeFailure(message: "\(tool): \(result.stderr) \(result.stdout)") }
    }

    /// A loopback port nothing listens on (bound once and released).
    public static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw Tool.ProbeFailure(message: "no free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Whether something accepts connections on loopback `port` (a connect, nothing sent).
    public static func accepts(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}
