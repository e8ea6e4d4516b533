import IngestdTesting
import Foundation
import Testing

/// Faults of the host rather than of an upload (issue #29), made for real.
@Suite(.serialized, .offTheSharedPool) struct HostFaultTests {
    /// A configured root that is not there (a mount missing) is refused at start (exit 78,
    /// naming the option) and never created: on the root disk it would silently fill up.
    @Test func aMissingRootIsRefusedAndNeverCreated() throws {
        let base = Paths.scratch("roots")
        try? FileManager.default.removeItem(atPath: base)
        let spool = "\(base)/spool", cdn = "\(base)/mnt/cdn"
        try FileManager.default.createDirectory(atPath: spool, withIntermediateDirectories: true)
        let runs: [(String, [String])] = [
            ("--cdn \(cdn)", ["watch", "--spool", spool, "--cdn", cdn]),
            ("--spool \(base)/absent", ["watch", "--spool", "\(base)/absent", "--cdn", spool]),
            ("--cdn \(cdn)", ["worker", "--database", "postgres://ingestd@127.0.0.1:1/ingestd", "--cdn", cdn, "--uploads", spool]),
            ("--uploads \(base)/mnt/uploads", ["worker", "--database", "postgres://ingestd@127.0.0.1:1/ingestd", "--cdn", spool,
                                               "--uploads", "\(base)/mnt/uploads"]),
            ("--uploads \(base)/mnt/uploads", ["submit", "--database", "postgres://ingestd@127.0.0.1:1/ingestd",
                                               "--uploads", "\(base)/mnt/uploads", "\(base)/mnt/uploads/a.mp4"]),
            ("--cdn \(cdn)", ["reprocess", spool, "--cdn", cdn]),
        ]
        for (named, arguments) in runs {
            let result = try Tool.run(Paths.binary, arguments)
            #expect(result.status == 78 && result.stderr.contains(named) && result.stderr.contains("no such directory"),
                    "\(arguments[0]): \(result.status) \(result.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: "\(base)/mnt") && !FileManager.default.fileExists(atPath: "\(base)/absent"))
        // A worker without an uploads root at all refuses to start too: it would open whatever a job row names.
        let unrooted = try Tool.run(Paths.binary, ["worker", "--database", "postgres://ingestd@127.0.0.1:1/ingestd", "--cdn", spool],
                                    environment: ["INGESTD_UPLOADS": ""])
        #expect(unrooted.status == 78 && unrooted.stderr.contains("--uploads"), "\(unrooted.stderr)")
    }

    /// The CDN root disappears while the daemon runs (unmounted): nothing is made in its place,
    /// the host claims nothing (`ingestd_host_ready 0`) and no upload is charged for it; once the
    /// root is back, the waiting upload publishes by itself.
    @Test func aCDNRootThatDisappearsIsNeitherRecreatedNorChargedToTheUpload() throws {
        let base = Paths.scratch("root-gone")
        try? FileManager.default.removeItem(atPath: base)
        let spool = "\(base)/spool", cdn = "\(base)/cdn"
        let daemon = try Daemon(spool: spool, cdn: cdn, extra: ["--max-attempts", "1"])
        try Daemon.wait(timeout: 30, "the daemon to watch") { Daemon.events(spool).contains { $0["event"] as? String == "started" } }
        try FileManager.default.moveItem(atPath: cdn, toPath: "\(base)/unmounted")
        try Daemon.drop(Paths.sample("hdr_hlg.mp4"), into: spool, as: "clip.mp4")
        try Daemon.wait(timeout: 30, "the upload to be queued and the host not ready") {
            !Daemon.entries("\(spool)/work").isEmpty && metrics(spool).contains("ingestd_host_ready 0")
        }
        sleep(2)
        #expect(!FileManager.default.fileExists(atPath: cdn), "the missing root was not recreated")
        #expect(!Daemon.events(spool).contains { $0["event"] as? String == "attempt" }, "no attempt on a broken host")
        #expect(Daemon.entries("\(spool)/failed").isEmpty)
        try FileManager.default.moveItem(atPath: "\(base)/unmounted", toPath: cdn)
        try Daemon.wait(timeout: 60, "the upload to publish once the root is back") { Daemon.entries("\(spool)/archive").count == 1 }
        let id = try #require(Daemon.entries("\(spool)/archive").first)
        #expect(try attempts(spool, id) == 0, "no attempt charged")
        #expect(metrics(spool).contains("ingestd_host_ready 1"))
        _ = daemon
    }

    func metrics(_ spool: String) -> String {
        (try? String(contentsOfFile: "\(spool)/metrics.prom", encoding: .utf8)) ?? ""
    }

    /// Failed attempts charged to an archived upload (its job.json).
    func attempts(_ spool: String, _ id: String) throws -> Int? {
        let data = try Data(contentsOf: URL(fileURLWithPath: "\(spool)/archive/\(id)/job.json"))
        return (try JSONSerialization.jsonObject(with: data) as? [String: Any])?["attempts"] as? Int
    }

    /// No secret reaches a job process (the one that decodes strangers' bytes): its environment
    /// is an allow-list, and neither its arguments nor the worker's hold the database password
    /// (`--database-url-file`).
    @Test(.enabled(if: PostgresServer.binaries != nil, "PostgreSQL is not installed"))
    func noSecretReachesAJobProcess() throws {
        let server = try PostgresServer(name: "secrets")
        let base = Paths.scratch("secrets")
        try? FileManager.default.removeItem(atPath: base)
        let cdn = "\(base)/cdn", input = "\(base)/slow.mp4", urlFile = "\(base)/database-url"
        try FileManager.default.createDirectory(atPath: cdn, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Paths.sample("portrait_rotated.mp4"), toPath: input)
        // Trust authentication ignores the password; it is here to be looked for.
        try Data("postgres://ingestd:hunter2-db@127.0.0.1:\(server.port)/ingestd\n".utf8).write(to: URL(fileURLWithPath: urlFile))
        chmod(urlFile, 0o600)
        let submitted = try Tool.run(Paths.binary, ["submit", "--database-url-file", urlFile, "--uploads", base, input])
        #expect(submitted.status == 0, "\(submitted.stderr)")
        let worker = Process()
        worker.executableURL = URL(fileURLWithPath: Paths.binary)
        worker.arguments = ["worker", "--database-url-file", urlFile, "--cdn", cdn, "--uploads", base, "--jobs", "1", "--poll", "0.5"]
        worker.environment = ProcessInfo.processInfo.environment.merging(
            ["AWS_SECRET_ACCESS_KEY": "hunter2-aws", "INGESTD_DATABASE_URL": "postgres://ingestd:hunter2-env@127.0.0.1:1/x"]) { $1 }
        worker.standardInput = FileHandle.nullDevice
        worker.standardOutput = FileHandle.nullDevice
        worker.standardError = FileHandle.nullDevice
        try worker.run()
        defer {
            kill(worker.processIdentifier, SIGKILL)
            worker.waitUntilExit()
        }
        try Daemon.wait(timeout: 60, "a job process") { !Daemon.children(of: worker.processIdentifier).isEmpty }
        let job = try #require(Daemon.children(of: worker.processIdentifier).first)
        func read(_ path: String) -> String {
            String(decoding: FileManager.default.contents(atPath: path) ?? Data(), as: UTF8.self).replacingOccurrences(of: "\0", with: "\n")
        }
        let environment = read("/proc/\(job)/environ")
        #expect(environment.contains("PATH="), "the job's environment was read")
        #expect(!environment.contains("hunter2") && !environment.contains("INGESTD_DATABASE_URL"), "\(environment)")
        #expect(read("/proc/\(job)/cmdline").contains("job-run") && !read("/proc/\(job)/cmdline").contains("hunter2"))
        #expect(!read("/proc/\(worker.processIdentifier)/cmdline").contains("hunter2"))
        // Confined by Landlock (#29 item 8: the webhook secret file is the worker's user's too):
        // restricting itself sets no_new_privs, which the kernel shows.
        if JobSandboxSupport.available {
            #expect(throws: Never.self, "the job process is confined") {
                try Daemon.wait(timeout: 10, "the job process to confine itself") { read("/proc/\(job)/status").contains("NoNewPrivs:\t1") }
            }
        }
        // The worker's own environment as the kernel shows it: the values it read are gone.
        let own = read("/proc/\(worker.processIdentifier)/environ")
        #expect(own.contains("PATH=") && !own.contains("hunter2"), "\(own)")
        try Daemon.wait(timeout: 120, "the job to be published") {
            (try? server.sql("SELECT state FROM ingestd_jobs")) == "published"
        }
    }

    /// A job process confines itself (Landlock) before it reads an upload: it can read its
    /// input, not a secret file beside it nor `/etc`, and cannot open a TCP connection (#29 item
    /// 8; "no upload may make the worker read anything outside it"). `sandbox-check` confines
    /// itself with the job process's rules, then tries.
    @Test(.enabled(if: JobSandboxSupport.available, "this kernel has no Landlock"))
    func aConfinedJobProcessReadsItsUploadAndNothingElse() throws {
        let base = Paths.scratch("sandbox")
        try? FileManager.default.removeItem(atPath: base)
        let upload = "\(base)/upload", job = "\(base)/job", secret = "\(base)/webhook.secret"
        for directory in [upload, job] { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) }
        try Data("clip".utf8).write(to: URL(fileURLWithPath: "\(upload)/clip.mp4"))
        try Data("whsec_hunter2".utf8).write(to: URL(fileURLWithPath: secret))
        let listener = try TCPListener()
        let result = try Tool.run(Paths.binary, ["sandbox-check", "--read", upload, "--write", job, "--open", "\(upload)/clip.mp4",
                                                 "--open", secret, "--open", "/etc/hostname", "--connect", "127.0.0.1:\(listener.port)"])
        let report = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result.stderr)")
        let opened = report["opened"] as? [String: String] ?? [:]
        #expect(report["confined"] as? Bool == true, "\(report)")
        #expect(opened["\(upload)/clip.mp4"] == "ok")
        #expect(opened[secret] == "Permission denied" && opened["/etc/hostname"] == "Permission denied", "\(opened)")
        #expect(report["connect"] as? String == "Permission denied", "\(report)")
        #expect(listener.accepts(), "the listener itself takes connections from an unconfined process")
    }

    /// SIGTERM is honoured within `--grace` (plus the 5 s a stopped job process is given) even
    /// when the database went away with a job in flight: the worker does not wait out a lease
    /// trying to record an end it cannot record (the lease expires; another worker rescues it).
    @Test(.enabled(if: PostgresServer.binaries != nil, "PostgreSQL is not installed"))
    func sigtermWithoutADatabaseIsHonouredWithinTheGrace() throws {
        let server = try PostgresServer(name: "nodb")
        let base = Paths.scratch("nodb")
        try? FileManager.default.removeItem(atPath: base)
        let cdn = "\(base)/cdn", input = "\(base)/slow.mp4"
        try FileManager.default.createDirectory(atPath: cdn, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Paths.sample("portrait_rotated.mp4"), toPath: input)
        #expect(try Tool.run(Paths.binary, ["submit", "--database", server.url, "--uploads", base, input]).status == 0)
        let log = "\(base)/worker.log"
        let worker = try WorkerProcess(["worker", "--database", server.url, "--cdn", cdn, "--uploads", base, "--jobs", "1", "--poll", "0.5",
                                        "--grace", "1", "--lease", "60"], log: log)
        try Daemon.wait(timeout: 60, "a job in flight") { !Daemon.children(of: worker.pid).isEmpty }
        try server.stop()
        sleep(1)
        let stopping = Date()
        kill(worker.pid, SIGTERM)
        try Daemon.wait(timeout: 90, "the worker to exit") { !worker.process.isRunning }
        let took = Date().timeIntervalSince(stopping)
        let said = String(decoding: FileManager.default.contents(atPath: log) ?? Data(), as: UTF8.self)
        // Alone this takes about 3 s (grace 1 s, the job stopped, 2 s to try to record the release);
        // on a loaded 2-core host the same steps have taken 12 s. What must never happen is waiting
        // out the 60 s lease for a database that is gone.
        #expect(took < 55, "SIGTERM honoured without waiting out the lease: \(took) s\n\(said)")
        #expect(said.contains("grace period over") && said.contains("cannot record the job's end") && said.contains("worker stopped"), "\(said)")
    }
}

/// Whether this kernel has Landlock (the job processes' confinement).
enum JobSandboxSupport {
    static let available: Bool = {
        let result = try? Tool.run(Paths.binary, ["sandbox-check"])
        return result?.stdout.contains("\"confined\":true") == true
    }()
}

/// A TCP socket listening on a free loopback port.
final class TCPListener {
    let socket: Int32
    let port: Int

    init() throws {
        port = try PostgresServer.freePort()
        socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(socket, 4) == 0 else { throw Tool.ProbeFailure(message: "cannot listen on \(port)") }
    }

    /// Whether an unconfined connection to it succeeds.
    func accepts() -> Bool {
        let client = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(client) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(client, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }

    deinit { close(socket) }
}
