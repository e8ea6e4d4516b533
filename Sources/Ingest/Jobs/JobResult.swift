import Foundation
import Transcode

/// What a job child process reports in `work/<id>/result.json` before it exits.
public struct JobResult: Codable, Sendable {
    public var ok: Bool
    /// Error code (`corrupt_input`, `too_long`, …) when not ok.
    public var code: String?
    public var message: String?
    public var durationSeconds: Double?
    public var speed: Double?
    /// For a job run with `--stage-only`: the staging directory left for the parent to publish.
    public var staging: String?

    public init(ok: Bool, code: String? = nil, message: String? = nil, durationSeconds: Double? = nil, speed: Double? = nil) {
        self.ok = ok
        self.code = code
        self.message = message
        self.durationSeconds = durationSeconds
        self.speed = speed
    }

    public init(manifest: ReadyManifest, staging: String? = nil) {
        ok = true
        self.staging = staging
        durationSeconds = manifest.durationSeconds
        speed = manifest.timings.speed
    }

    public init(error: Error) {
        ok = false
        code = (error as? TranscodeError)?.code ?? (error as? IngestError)?.code ?? "internal"
        message = "\(error)"
    }
}

/// Progress of a job in flight, in `work/<id>/progress.json` (read by `ingestd status`).
public struct JobProgress: Codable, Sendable {
    public var fraction: Double
    public var outputSeconds: Double
    public var speed: Double
    public var etaSeconds: Double?
    public var updatedAt: Date

    public init(fraction: Double, outputSeconds: Double, speed: Double, etaSeconds: Double?, updatedAt: Date) {
        self.fraction = fraction
        self.outputSeconds = outputSeconds
        self.speed = speed
        self.etaSeconds = etaSeconds
        self.updatedAt = updatedAt
    }
}

/// Limits a job child applies to itself before touching the input.
public struct ChildLimits: Sendable {
    public var memoryMB: Int
    public var cpuSeconds: Int

    public init(memoryMB: Int, cpuSeconds: Int) {
        self.memoryMB = memoryMB
        self.cpuSeconds = cpuSeconds
    }

    /// Applies RLIMIT_AS and RLIMIT_CPU to the current process.
    public func apply() {
        var memory = rlimit(rlim_cur: rlim_t(memoryMB) << 20, rlim_max: rlim_t(memoryMB) << 20)
        setrlimit(__rlimit_resource_t(RLIMIT_AS.rawValue), &memory)
        var cpu = rlimit(rlim_cur: rlim_t(cpuSeconds), rlim_max: rlim_t(cpuSeconds + 5))
        setrlimit(__rlimit_resource_t(RLIMIT_CPU.rawValue), &cpu)
    }

    /// Kills this process when its parent (the daemon) dies, so an orphan never publishes late.
    public static func dieWithParent() {
        let parent = getppid()
        let thread = Thread {
            while getppid() == parent { usleep(200_000) }
            kill(getpid(), SIGKILL)
        }
        thread.name = "ingestd.parent-watch"
        thread.start()
    }
}
