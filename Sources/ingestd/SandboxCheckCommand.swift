import ArgumentParser
import Foundation
import Ingest

/// Confines itself as a job process is confined (``JobSandbox``), then tries to open files and
/// a TCP connection, and prints what happened as JSON: whether this host's kernel confines job
/// processes, and a check the tests make of the rules themselves.
struct SandboxCheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sandbox-check",
        abstract: "Show whether job processes are confined here (Landlock): confine, then try to read and connect."
    )

    @Option(help: "A path the confined process may read (repeatable).") var read: [String] = []
    @Option(help: "A path the confined process may write (repeatable).") var write: [String] = []
    @Option(help: "A file to try to read once confined (repeatable).") var open: [String] = []
    @Option(help: "ADDR:PORT to try to connect to over TCP once confined.") var connect: String?

    func run() throws {
        let unconfined = try JobSandbox.confine(JobSandbox.Rules(read: JobSandbox.rules(for: nil).read + read, write: write))
        var opened: [String: String] = [:]
        for path in open {
            let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
            opened[path] = fd >= 0 ? "ok" : String(cString: strerror(errno))
            if fd >= 0 { close(fd) }
        }
        var report: [String: Any] = ["confined": unconfined == nil, "opened": opened]
        if let unconfined { report["why"] = unconfined }
        if let connect, let colon = connect.lastIndex(of: ":"), let port = UInt16(connect[connect.index(after: colon)...]) {
            let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            inet_pton(AF_INET, String(connect[..<colon]), &address.sin_addr)
            let result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            report["connect"] = result == 0 ? "ok" : String(cString: strerror(errno))
            close(socket)
        }
        let data = try JSONSerialization.data(withJSONObject: report, options: [.sortedKeys, .withoutEscapingSlashes])
        print(String(decoding: data, as: UTF8.self))
    }
}
