internal import CLandlock
import Foundation

/// Confines a job process (the one that decodes strangers' bytes) with Landlock before it opens
/// the upload: it may read its input, the preset, the system's libraries and a few files of
/// `/etc`, and write only its job directory and the output's directory; it may not open a TCP
/// connection. A decoder exploited by a hostile upload can then read no secret (the webhook
/// secret file, the database URL file, other uploads) and reach no network. On a kernel without
/// Landlock the job runs unconfined, and ``confine(_:)`` says so.
public enum JobSandbox {
    /// What the job process may touch for `request`.
    public struct Rules: Sendable, Equatable {
        public var read: [String]
        public var write: [String]

        public init(read: [String], write: [String]) {
            self.read = read
            self.write = write
        }
    }

    /// Files of `/etc` the C library, Foundation and time zones read (never `/etc` whole: a
    /// secret may live there).
    static let systemFiles = ["/etc/localtime", "/etc/ld.so.cache", "/etc/nsswitch.conf", "/etc/passwd", "/etc/group",
                              "/dev/urandom", "/dev/zero"]
    /// `/proc` whole: libdispatch's pool monitor reads `/proc/<thread id>/stat`, which is not
    /// beneath `/proc/<pid>`, and crashes when it cannot. Another process's environment, memory
    /// and descriptors stay out of reach: Landlock refuses ptrace-level access to any process
    /// outside the job's own domain.
    /// (`/sys/devices/system/node`: libnuma's topology, which x265 reads to place its thread
    /// pools; without it every HEVC encoder logs `numa_sched_setaffinity` failures.)
    static let systemDirectories = ["/usr", "/lib", "/lib64", "/sys/devices/system/cpu", "/sys/devices/system/node", "/proc"]

    /// The rules of a job process for `request`; with none, only what every process needs.
    public static func rules(for request: JobRequest?) -> Rules {
        var read = systemDirectories + systemFiles
        // Wherever this binary and its libraries were loaded from (a toolchain outside /usr), and
        // the Swift runtime's crash backtracer beside them (a crash report is how a bug is found).
        let libraries = loadedLibraryDirectories()
        read += libraries
        read += libraries.filter { $0.hasSuffix("/lib/swift/linux") }.map { String($0.dropLast("lib/swift/linux".count)) + "libexec/swift" }
        guard let request else { return Rules(read: read, write: ["/dev/null"]) }
        switch request.input {
        case .path(let path): read.append(path)
        case .soleEntry(let holder): read.append(holder)
        }
        if request.preset.contains("/") { read.append(request.preset) }
        read += [request.publishedVersion, request.captionsFrom].compactMap { $0 }
        let write = [(request.resultPath as NSString).deletingLastPathComponent, (request.progressPath as NSString).deletingLastPathComponent,
                     (request.output as NSString).deletingLastPathComponent, "/dev/null"]
        return Rules(read: Array(Set(read)).sorted(), write: Array(Set(write)).sorted())
    }

    /// Confines this process for `request`. Returns nil once confined, or why it is not (no
    /// Landlock in this kernel); throws when Landlock is there but refuses the rules.
    public static func confine(_ request: JobRequest) throws -> String? {
        try confine(rules(for: request))
    }

    public static func confine(_ rules: Rules) throws -> String? {
        let abi = ingestd_landlock_abi()
        guard abi >= 1 else { return "Landlock is not available in this kernel (\(String(cString: strerror(errno))))" }
        var handled = Access.abi1
        if abi >= 2 { handled |= Access.refer }
        if abi >= 3 { handled |= Access.truncate }
        let network: UInt64 = abi >= 4 ? Access.bindTCP | Access.connectTCP : 0
        let ruleset = ingestd_landlock_create(handled, network)
        guard ruleset >= 0 else { throw Refused(step: "create a ruleset") }
        defer { close(ruleset) }
        for (paths, rights) in [(rules.read, Access.read), (rules.write, handled)] {
            for path in paths {
                var info = stat()
                guard stat(path, &info) == 0 else { continue }  // absent here (e.g. no /lib64)
                let allowed = info.st_mode & S_IFMT == S_IFDIR ? rights : rights & Access.fileRights
                guard ingestd_landlock_allow(ruleset, path, allowed & handled) == 0 else { throw Refused(step: "allow \(path)") }
            }
        }
        guard ingestd_landlock_restrict(ruleset) == 0 else { throw Refused(step: "restrict the process") }
        return nil
    }

    /// Landlock's access rights (`LANDLOCK_ACCESS_FS_*`, `LANDLOCK_ACCESS_NET_*`).
    enum Access {
        static let execute: UInt64 = 1 << 0, writeFile: UInt64 = 1 << 1, readFile: UInt64 = 1 << 2, readDir: UInt64 = 1 << 3
        static let refer: UInt64 = 1 << 13, truncate: UInt64 = 1 << 14
        /// Every right of ABI 1 (bits 0-12: read, write, execute, remove and make each kind).
        static let abi1: UInt64 = (1 << 13) - 1
        static let read = execute | readFile | readDir
        /// The rights a rule on a file (not a directory) may carry.
        static let fileRights = execute | writeFile | readFile | truncate
        static let bindTCP: UInt64 = 1 << 0, connectTCP: UInt64 = 1 << 1
    }

    public struct Refused: Error, CustomStringConvertible {
        var step: String
        var code = errno

        public init(step: String) {
            self.step = step
        }
        public var description: String { "cannot confine the job process: \(step): \(String(cString: strerror(code)))" }
    }

    /// Directories of every file mapped into this process (its binary and shared libraries).
    private static func loadedLibraryDirectories() -> [String] {
        guard let maps = try? String(contentsOfFile: "/proc/self/maps", encoding: .utf8) else { return [] }
        var directories = Set<String>()
        for line in maps.split(separator: "\n") {
            guard let slash = line.firstIndex(of: "/") else { continue }
            let path = String(line[slash...])
            guard !path.hasSuffix(" (deleted)") else { continue }
            directories.insert((path as NSString).deletingLastPathComponent)
        }
        return directories.sorted()
    }
}
