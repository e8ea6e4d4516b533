import Foundation

/// Runs external checkers (ffprobe, ffmpeg, the ingestd binary) and captures their output.
public enum Tool {
    public struct Result: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String
    }

    public static func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable.hasPrefix("/") ? executable : "/usr/bin/env")
        process.arguments = executable.hasPrefix("/") ? arguments : [executable] + arguments
        var env = ProcessInfo.processInfo.environment
        env.merge(environment) { $1 }
        process.environment = env
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tool-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("out"), err = directory.appendingPathComponent("err")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        let outHandle = try FileHandle(forWritingTo: out), errHandle = try FileHandle(forWritingTo: err)
        process.standardOutput = outHandle
        process.standardError = errHandle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        try outHandle.close()
        try errHandle.close()
        return Result(status: process.terminationStatus,
                      stdout: (try? String(contentsOf: out, encoding: .utf8)) ?? "",
                      stderr: (try? String(contentsOf: err, encoding: .utf8)) ?? "")
    }

    public static func exists(_ name: String) -> Bool {
        (try? run("sh", ["-c", "command -v \(name)"]).status) == 0
    }

    /// `ffprobe -of json` parsed.
    public static func ffprobe(_ arguments: [String]) throws -> [String: Any] {
        let result = try run("ffprobe", ["-v", "error", "-of", "json"] + arguments)
        guard result.status == 0 else { throw ProbeFailure(message: result.stderr) }
        return try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any] ?? [:]
    }

    public struct ProbeFailure: Error {
        public var message: String
        public init(message: String) { self.message = message }
    }
}

/// Small accessors for ffprobe's JSON.
extension Dictionary where Key == String, Value == Any {
    public func list(_ key: String) -> [[String: Any]] { self[key] as? [[String: Any]] ?? [] }
    public func string(_ key: String) -> String? { self[key].map { "\($0)" } }
    public func double(_ key: String) -> Double? { string(key).flatMap(Double.init) }
    public func int(_ key: String) -> Int? { (self[key] as? Int) ?? string(key).flatMap(Int.init) }
}
