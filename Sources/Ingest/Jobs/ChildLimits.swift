import Foundation

/// Limits a job child applies to itself before touching the input.
public struct ChildLimits: Codable, Sendable, Equatable {
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
