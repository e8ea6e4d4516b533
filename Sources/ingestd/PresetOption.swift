import ArgumentParser
import Foundation
import Transcode

/// `--preset NAME|PATH`, shared by every command that encodes.
struct PresetOption: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "Preset name (looked up in $INGESTD_PRESETS, ./Presets, then BIN/../share/ingestd/presets) or path to a preset JSON file.",
        valueName: "name|path"))
    var preset: String = "default"

    /// The preset as an absolute path (or `default`), for child processes with another cwd.
    func resolvedArgument() -> String {
        guard preset != "default" else { return preset }
        let candidates = Preset.candidatePaths(preset, searchDirectories: Self.searchDirectories)
        // A path stays a path (it fails later with its own name when missing); a name resolves to
        // the first file that exists.
        let found = Preset.isPath(preset) ? preset : candidates.first { FileManager.default.fileExists(atPath: $0) }
        return found.map { URL(fileURLWithPath: $0).standardizedFileURL.path } ?? preset
    }

    private static var searchDirectories: [String] {
        var directories = ["Presets"]
        if let extra = ProcessInfo.processInfo.environment["INGESTD_PRESETS"] { directories.insert(extra, at: 0) }
        // The binary's own path (argv[0] is a bare name when it was found on PATH).
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let bin = URL(fileURLWithPath: executable).resolvingSymlinksInPath().deletingLastPathComponent()
        directories.append(bin.appendingPathComponent("../share/ingestd/presets").standardizedFileURL.path)
        return directories
    }

    func load() throws -> Preset { try Self.load(preset) }

    /// The preset named (or at the path) `preset`, as `--preset` would load it.
    static func load(_ preset: String) throws -> Preset {
        try Preset.load(preset, searchDirectories: searchDirectories)
    }
}
