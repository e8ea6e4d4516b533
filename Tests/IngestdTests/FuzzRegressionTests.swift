import IngestdTesting
import Foundation
import Testing
import Transcode

/// Every seed and every input that once crashed a fuzz target goes through the target again
/// (the plain `ingestd-fuzz` build replays them in one process): none may trap.
@Suite struct FuzzRegressionTests {
    static var replayer: String {
        URL(fileURLWithPath: Paths.binary).deletingLastPathComponent().appendingPathComponent("ingestd-fuzz").path
    }

    static func inputs(_ target: String) -> [String] {
        ["corpus", "regressions"].flatMap { kind in
            let directory = "\(Paths.root)/Tests/fuzz/libfuzzer/\(kind)/\(target)"
            return Daemon.entries(directory).map { "\(directory)/\($0)" }
        }
    }

    @Test(arguments: ["probe", "upload", "preset", "caption"])
    func corpusAndRegressionsReplayWithoutATrap(target: String) throws {
        let inputs = Self.inputs(target)
        #expect(!inputs.isEmpty)
        let result = try Tool.run(Self.replayer, [target] + inputs, environment: ["INGESTD_FUZZ_SAMPLES": Paths.sample("upload")])
        #expect(result.status == 0, "\(target): \(result.stderr.suffix(2000))")
        #expect(result.stdout.contains("\(target): \(inputs.count) inputs replayed"), "\(result.stdout)")
    }

    /// The preset regressions are refused as bad presets naming the field, not trapped on.
    @Test func presetRegressionsAreRefusedByField() throws {
        let expected = ["max-duration-1e300.json": "limits.maxDurationSeconds", "max-bytes-int64-max.json": "limits.maxBytes",
                        "segment-2e62.json": "video.segmentSeconds"]
        for (name, field) in expected {
            let data = try Data(contentsOf: URL(fileURLWithPath: "\(Paths.root)/Tests/fuzz/libfuzzer/regressions/preset/\(name)"))
            #expect {
                _ = try Preset.decode(data, source: name)
            } throws: { error in
                guard case .badPreset(_, let named, _) = error as? TranscodeError else { return false }
                return named == field
            }
        }
    }
}
