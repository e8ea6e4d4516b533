import Foundation
import Transcode

/// A real `ingestd watch` process on a temporary spool, for end-to-end tests.
public final class Daemon {
    public let spool: String
    public let cdn: String
    public let process = Process()

    /// `environment`: added to the test's own; `log`: where its standard error (its log) goes;
    /// `launcher`: a command that runs it (e.g. `setpriv` with another user), from `/` as a
    /// service starts (the test's own directory may be closed to that user); `binary`: the
    /// `ingestd` it runs.
    public init(spool: String, cdn: String, extra: [String] = [], environment: [String: String] = [:], log: String? = nil,
                launcher: [String] = [], binary: String = Paths.binary) throws {
        self.spool = spool
        self.cdn = cdn
        try FileManager.default.createDirectory(atPath: "\(spool)/incoming", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: cdn, withIntermediateDirectories: true)
        process.executableURL = URL(fileURLWithPath: launcher.first ?? binary)
        process.arguments = launcher.dropFirst() + (launcher.isEmpty ? [] : [binary])
            + ["watch", "--spool", spool, "--cdn", cdn, "--settle", "0.5", "--backoff", "0.2"] + extra
        if !launcher.isEmpty { process.currentDirectoryURL = URL(fileURLWithPath: "/") }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        if let log { _ = FileManager.default.createFile(atPath: log, contents: nil) }
        process.standardError = FileHandle(forWritingAtPath: log ?? "/dev/null")
        try process.run()
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    public var pid: Int32 { process.processIdentifier }

    /// Drops a copy of `source` into incoming/ atomically (write hidden, then rename).
    public static func drop(_ source: String, into spool: String, as name: String) throws {
        let hidden = "\(spool)/incoming/.\(name).part"
        try? FileManager.default.removeItem(atPath: hidden)
        try FileManager.default.copyItem(atPath: source, toPath: hidden)
        guard rename(hidden, "\(spool)/incoming/\(name)") == 0 else { throw Tool.ProbeFailure(message: "rename failed") }
    }

    /// kill -9 of `process`, as a crash would, its children first (a worker's job processes, or
    /// the program a launcher runs: it holds the descriptor `Process` watches). When `launched`
    /// (under a launcher such as `faketime`, which runs its command as a child), the launcher
    /// then has up to a second to exit on its own: `faketime` removes its `/dev/shm` files only then.
    public static func kill9(_ process: Process, launched: Bool) {
        guard process.isRunning else { return }
        for child in children(of: process.processIdentifier) { kill(child, SIGKILL) }
        let deadline = Date().addingTimeInterval(launched ? 1 : 0)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// Live child processes of `pid` (from /proc).
    public static func children(of pid: Int32) -> [Int32] {
        entries("/proc").compactMap(Int32.init).filter { stat($0)?.parent == pid }
    }

    /// A live job process (`ingestd job-run`) of worker `pid`, if it has one now.
    public static func runningJobProcess(of pid: Int32) -> Int32? {
        children(of: pid).first { commandLine($0).contains("job-run") }
    }

    /// The job process (`ingestd job-run`) worker `pid` started, once there is one.
    public static func jobProcess(of pid: Int32, timeout: Double = 120) throws -> Int32 {
        var job: Int32?
        try wait(timeout: timeout, "a job process of \(pid)") {
            job = runningJobProcess(of: pid)
            return job != nil
        }
        return job!
    }

    /// The job process worker `pid` starts, the worker run in ``step(_:timeout:_:until:)``'s steps
    /// until there is one and left stopped (`SIGCONT` it to go on).
    public static func steppedJobProcess(of pid: Int32, timeout: Double = 60) throws -> Int32 {
        var job: Int32?
        try step(pid, timeout: timeout, "a job process of \(pid)") {
            job = runningJobProcess(of: pid)
            return job != nil
        }
        return job!
    }

    /// Stops process `pid` and lets it run only in 50 ms steps until `done`, then leaves it
    /// stopped (`SIGCONT` it to go on): a busy host can neither hurry it past `done` nor slow
    /// the test's view of it. `done` is asked between steps, while it is stopped, and the next
    /// step follows at once: the process runs at its own pace but for the checks, so a job whose
    /// gate judges its pace is judged on that, not on a fraction the test's waits would leave it.
    public static func step(_ pid: Int32, timeout: Double, _ what: String, until done: () -> Bool) throws {
        try step([pid], timeout: timeout, what, until: done)
    }

    /// ``step(_:timeout:_:until:)`` for several processes, stepped together.
    public static func step(_ pids: [Int32], timeout: Double, _ what: String, until done: () -> Bool) throws {
        let deadline = Date().addingTimeInterval(timeout)
        for pid in pids { kill(pid, SIGSTOP) }
        while !done() {
            guard Date() < deadline else { throw Tool.ProbeFailure(message: "timed out stepping until \(what)") }
            for pid in pids { kill(pid, SIGCONT) }
            usleep(50_000)
            for pid in pids { kill(pid, SIGSTOP) }
        }
    }

    /// The arguments `pid` was started with, joined by spaces ("" once it is gone).
    public static func commandLine(_ pid: Int32) -> String {
        let raw = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") ?? Data()
        return String(decoding: raw.map { $0 == 0 ? 32 : $0 }, as: UTF8.self)
    }

    /// The process group of `pid`.
    public static func processGroup(_ pid: Int32) -> Int32? { stat(pid)?.group }

    /// Parent and process group from /proc/PID/stat (fields 4 and 5, after the command in parentheses).
    private static func stat(_ pid: Int32) -> (parent: Int32, group: Int32)? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 3, let parent = Int32(fields[1]), let group = Int32(fields[2]) else { return nil }
        return (parent, group)
    }

    public static func entries(_ path: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
    }

    /// Waits until `condition` holds, polling; fails after `timeout` seconds.
    public static func wait(timeout: Double, _ what: String, _ condition: () -> Bool) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while !condition() {
            guard Date() < deadline else { throw Tool.ProbeFailure(message: "timed out waiting for \(what)") }
            usleep(200_000)
        }
    }

    /// True when nothing is waiting or in flight.
    public static func settled(_ spool: String) -> Bool {
        entries("\(spool)/incoming").isEmpty && entries("\(spool)/work").isEmpty
    }

    public static func events(_ spool: String) -> [[String: Any]] {
        let text = (try? String(contentsOfFile: "\(spool)/events.ndjson", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }
}
