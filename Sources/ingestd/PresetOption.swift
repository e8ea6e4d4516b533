import ArgumentParser
import Foundation
import Transcode

/// `--preset NAME|PATH`, shared by every command that encodes.
struct PresetOption: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "Preset name (looked up in ./Presets and $INGESTD_PRESETS) or path to a preset JSON file.",
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
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        directories.append(executable.deletingLastPathComponent().appendingPathComponent("../share/ingestd/presets").path)
        return directories
    }

    func load() throws -> Preset { try Self.load(preset) }

    /// The preset named (or at the path) `preset`, as `--preset` would load it.
    static func load(_ preset: String) throws -> Preset {
        try Preset.load(preset, searchDirectories: searchDirectories)
    }
}
