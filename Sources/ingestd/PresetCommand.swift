import ArgumentParser
import Foundation
import Transcode

struct PresetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "preset",
        abstract: "Print a preset as canonical JSON after validating it, with its content hash.",
        discussion: """
        Start a custom preset from the built-in one, then check it:
          ingestd preset > Presets/mobile.json
          $EDITOR Presets/mobile.json
          ingestd preset --preset mobile     # exits 78 and names the field when invalid
        """
    )

    @OptionGroup var presetOption: PresetOption

    @Flag(name: .long, help: "Print only the content hash (recorded in manifest.json).")
    var hash = false

    func run() throws {
        do {
            let preset = try presetOption.load()
            if hash {
                print(preset.contentHash)
            } else {
                print(String(decoding: preset.canonicalJSON(), as: UTF8.self))
            }
        } catch {
            throw Report.fail(error, json: false)
        }
    }
}
