import ArgumentParser
import Foundation
import Transcode

/// `--preset NAME|PATH`, shared by every command that encodes.
struct PresetOption: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "Preset name (looked up in ./Presets and $INGESTD_PRESETS) or path to a preset JSON file.",
        valueName: "name|path"))
    var preset: String = "default"

    func load() throws -> Preset {
        var directories = ["Presets"]
        if let extra = ProcessInfo.processInfo.environment["INGESTD_PRESETS"] { directories.insert(extra, at: 0) }
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        directories.append(executable.deletingLastPathComponent().appendingPathComponent("../share/ingestd/presets").path)
        return try Preset.load(preset, searchDirectories: directories)
    }
}
