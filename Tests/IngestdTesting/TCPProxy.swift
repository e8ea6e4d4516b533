import Foundation

/// A loopback TCP proxy the test controls (`tcp_proxy.py`): it forwards to `target`, then
/// goes silent on ``drop()`` (bytes swallowed both ways, no reset, as on a path that drops
/// packets) and forwards again on ``forward()``.
public final class TCPProxy {
    public let port: Int
    private let process = Process()

    public init(target: Int) throws {
        port = try PostgresServer.freePort()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["\(Paths.root)/Tests/IngestdTesting/tcp_proxy.py", "\(port)", "\(target)"]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        try Daemon.wait(timeout: 20, "the TCP proxy to listen") { Self.accepts(self.port) }
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// Silence: nothing passes, nothing is reset.
    public func drop() { kill(process.processIdentifier, SIGUSR1) }

    /// Bytes pass again (on the connections that lived through the silence, and new ones).
    public func forward() { kill(process.processIdentifier, SIGUSR2) }

    private static func accepts(_ port: Int) -> Bool {
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
