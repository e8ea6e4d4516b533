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
        try Daemon.wait(timeout: 20, "the TCP proxy to listen") { PostgresServer.accepts(self.port) }
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// Silence: nothing passes, nothing is reset.
    public func drop() { kill(process.processIdentifier, SIGUSR1) }

    /// Bytes pass again (on the connections that lived through the silence, and new ones).
    public func forward() { kill(process.processIdentifier, SIGUSR2) }
}
