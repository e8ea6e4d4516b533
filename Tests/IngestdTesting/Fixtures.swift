import Foundation
import Ingest
import Logging
import Transcode

/// Paths of the repository, its samples and the shared real-media folder.
public enum Paths {
    public static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../..").standardized.path
    /// A shipped sample by name (an absolute path, such as ``smallSample``, as it is).
    public static func sample(_ name: String) -> String { name.hasPrefix("/") ? name : "\(root)/samples/\(name)" }
    /// A 6 s upright 360x640 clip with a beep, made once per test process: a job of a fifth of the
    /// CPU of `portrait_rotated.mp4` (1.4 CPU-s), for tests that need jobs to run and publish, not
    /// a particular ladder (kill -9, restarts, paths).
    public static let smallSample: String = {
        let path = scratch("small-portrait.mp4")
        _ = try? Tool.run("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=360x640:r=30:d=6",
                                     "-f", "lavfi", "-i", "sine=f=1000:d=6:beep_factor=4:sample_rate=48000",
                                     "-c:v", "libx264", "-preset", "veryfast", "-crf", "32", "-pix_fmt", "yuv420p",
                                     "-c:a", "aac", "-b:a", "64k", "-ac", "2", "-movflags", "+faststart", path])
        return path
    }()
    /// `../shared/media` beside the project root, when present.
    public static var sharedMedia: String? {
        let path = URL(fileURLWithPath: "\(root)/../shared/media").standardized.path
        return FileManager.default.fileExists(atPath: path) ? path : nil
    }

    /// `$TMPDIR/ingestd-tests-<pid>`: this test process's files (a few GB). Made the first time it
    /// is named, when earlier runs' directories whose process is gone are removed: each run kept
    /// about 3 GB, and a day of runs filled a disk.
    public static let scratchRoot: String = {
        let temporary = FileManager.default.temporaryDirectory.path
        for name in (try? FileManager.default.contentsOfDirectory(atPath: temporary)) ?? [] where name.hasPrefix("ingestd-tests-") {
            guard let pid = pid_t(name.dropFirst("ingestd-tests-".count)), pid != getpid(), kill(pid, 0) != 0, errno == ESRCH else { continue }
            try? FileManager.default.removeItem(atPath: "\(temporary)/\(name)")
        }
        return "\(temporary)/ingestd-tests-\(getpid())"
    }()

    /// The built `ingestd` binary next to the test bundle (or in .build/debug).
    public static var binary: String {
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("ingestd").path
        if FileManager.default.isExecutableFile(atPath: beside) { return beside }
        return "\(root)/.build/debug/ingestd"
    }

    public static func scratch(_ name: String) -> String {
        let path = "\(scratchRoot)/\(name)"
        try? FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        return path
    }
}

/// Transcodes each input once per test run and shares the result between tests.
public actor Fixtures {
    public static let shared = Fixtures()
    private var jobs: [String: Task<Output, Error>] = [:]

    public struct Output: Sendable {
        public var directory: String
        public var manifest: ReadyManifest
    }

    public func output(_ input: String) async throws -> Output {
        if let job = jobs[input] { return try await job.value }
        let destination = Paths.scratch("out-\(URL(fileURLWithPath: input).lastPathComponent)-\(jobs.count)")
        let job = Task {
            FFmpegLog.setLevel(.fatal)
            var logger = Logger(label: "test")
            logger.logLevel = .warning
            let manifest = try await TranscodeJob(input: input, destination: destination, preset: .builtIn).run(logger: logger)
            return Output(directory: destination, manifest: manifest)
        }
        jobs[input] = job
        return try await job.value
    }

    /// A synthetic clip made with the ffmpeg CLI (a test tool only), cached per run.
    public func generated(_ name: String, _ arguments: [String]) throws -> String {
        let path = Paths.scratch(name)
        if !FileManager.default.fileExists(atPath: path) {
            let result = try Tool.run("ffmpeg", ["-hide_banner", "-loglevel", "error", "-y"] + arguments + [path])
            guard result.status == 0 else { throw Tool.ProbeFailure(message: result.stderr) }
        }
        return path
    }

    /// An upload directory of generated clips (name → ffmpeg arguments) and `manifest`, cached per run.
    /// Files whose name starts with `rotated-` get a "rotate 90° clockwise" display matrix.
    public func upload(_ name: String, files: [String: [String]], manifest: String) throws -> String {
        let directory = Paths.scratch("upload-\(name)")
        if FileManager.default.fileExists(atPath: "\(directory)/upload.json") { return directory }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for (file, arguments) in files {
            let path = "\(directory)/\(file)"
            let result = try Tool.run("ffmpeg", ["-hide_banner", "-loglevel", "error", "-y"] + arguments + [path])
            guard result.status == 0 else { throw Tool.ProbeFailure(message: "\(file): \(result.stderr)") }
            if file.hasPrefix("rotated-") {
                let patched = try Tool.run("python3", [Paths.sample("set_rotation.py"), path])
                guard patched.status == 0 else { throw Tool.ProbeFailure(message: patched.stderr) }
            }
        }
        try Data(manifest.utf8).write(to: URL(fileURLWithPath: "\(directory)/upload.json"))
        return directory
    }
}

/// A preset file made from the built-in one (`ingestd preset`), renamed and with some limits changed.
public enum PresetFile {
    /// Writes the preset to `path` and returns its content hash (`ingestd preset --hash`).
    @discardableResult
    public static func write(_ path: String, name: String, limits: [String: Any] = [:]) throws -> String {
        let builtIn = try Tool.run(Paths.binary, ["preset"])
        guard var preset = try JSONSerialization.jsonObject(with: Data(builtIn.stdout.utf8)) as? [String: Any],
              var current = preset["limits"] as? [String: Any] else { throw Tool.ProbeFailure(message: "ingestd preset: \(builtIn.stderr)") }
        current.merge(limits) { $1 }
        preset["limits"] = current
        preset["name"] = name
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try JSONSerialization.data(withJSONObject: preset, options: [.sortedKeys]).write(to: URL(fileURLWithPath: path))
        let hash = try Tool.run(Paths.binary, ["preset", "--preset", path, "--hash"])
        guard hash.status == 0 else { throw Tool.ProbeFailure(message: "ingestd preset --hash: \(hash.stderr)") }
        return hash.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
