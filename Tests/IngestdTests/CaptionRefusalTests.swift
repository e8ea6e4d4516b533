import IngestdTesting
import Foundation
import Testing
import Ingest
import Transcode

/// Hostile caption tracks: each refused as `bad_captions` with the field and the reason, before
/// anything is decoded; one through the command line (exit 65, `--json`).
@Suite struct CaptionRefusalTests {
    /// (what, the `captions` entries, the files, the field named, a phrase of the reason)
    static let cases: [(String, String, [String: Data], String, String)] = [
        ("not UTF-8", #"[{"file": "x.vtt", "language": "en"}]"#, ["x.vtt": Data([0x57, 0x45, 0x42, 0x56, 0x54, 0x54, 0x0A, 0x0A, 0xFF, 0xFE])],
         "captions[0].file", "not UTF-8"),
        ("bad language", #"[{"file": "x.vtt", "language": "english!"}]"#, ["x.vtt": Data("WEBVTT\n".utf8)], "captions[0].language", "language tag"),
        ("a quote in the name", #"[{"file": "x.vtt", "language": "en", "name": "a\"b"}]"#, ["x.vtt": Data("WEBVTT\n".utf8)],
         "captions[0].name", "1-64 characters"),
        ("one language twice", #"[{"file": "x.vtt", "language": "en"}, {"file": "x.vtt", "language": "en"}]"#,
         ["x.vtt": Data("WEBVTT\n".utf8)], "captions[1].language", "given twice"),
        ("out of order", #"[{"file": "x.vtt", "language": "en"}]"#,
         ["x.vtt": Data("WEBVTT\n\n00:00:02.000 --> 00:00:03.000\nb\n\n00:00:01.000 --> 00:00:01.500\na\n".utf8)],
         "captions[0].file", "time order"),
        ("negative time", #"[{"file": "x.srt", "language": "en"}]"#, ["x.srt": Data("1\n-00:00:01,000 --> 00:00:02,000\nx\n".utf8)],
         "captions[0].file", "line 2"),
        ("too large", #"[{"file": "x.vtt", "language": "en"}]"#, ["x.vtt": Data(repeating: 0x41, count: (512 << 10) + 1)],
         "captions[0].file", "over the limit"),
        ("outside the upload", #"[{"file": "../x.vtt", "language": "en"}]"#, [:], "captions[0].file", "'..' is not allowed"),
        ("missing", #"[{"file": "gone.vtt", "language": "en"}]"#, [:], "captions[0].file", "no such file"),
    ]

    static func upload(_ name: String, captions: String, files: [String: Data]) throws -> String {
        let directory = Paths.scratch("caption-refusal-\(name.replacingOccurrences(of: " ", with: "-"))-\(UUID().uuidString.prefix(6))")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Paths.sample("upload/clip1.mp4"), toPath: "\(directory)/clip.mp4")
        for (file, data) in files { try data.write(to: URL(fileURLWithPath: "\(directory)/\(file)")) }
        try Data(#"{"id": "x", "clips": [{"file": "clip.mp4"}], "captions": \#(captions)}"#.utf8)
            .write(to: URL(fileURLWithPath: "\(directory)/upload.json"))
        return directory
    }

    @Test(arguments: cases.indices)
    func aHostileTrackIsRefusedByField(_ index: Int) throws {
        let (name, captions, files, field, reason) = Self.cases[index]
        let directory = try Self.upload(name, captions: captions, files: files)
        do {
            _ = try Upload.open(directory, limits: Preset.builtIn.limits)
            Issue.record("\(name): accepted")
        } catch let error as IngestError {
            guard case .badCaptions(_, let named, let said) = error else { Issue.record("\(name): \(error)"); return }
            #expect(error.code == "bad_captions" && named == field && said.contains(reason), "\(name): \(error)")
        }
    }

    /// A per-clip track of a language the whole video already has, through `ingestd transcode
    /// --json`: exit 65, `bad_captions`, the field, nothing written.
    @Test func theCommandLineSaysWhichTrackAndExits65() throws {
        let directory = try Self.upload("cli", captions: #"[{"file": "x.vtt", "language": "en"}]"#,
                                        files: ["x.vtt": Data("WEBVTT\n\n00:00:00.000 --> 00:00:01.000\nhi\n".utf8)])
        let manifest = #"{"id": "x", "clips": [{"file": "clip.mp4", "captions": [{"file": "x.vtt", "language": "en"}]}], "captions": [{"file": "x.vtt", "language": "en"}]}"#
        try Data(manifest.utf8).write(to: URL(fileURLWithPath: "\(directory)/upload.json"))
        let out = "\(directory)-out"
        let result = try Tool.run(Paths.binary, ["transcode", directory, "--out", out, "--json", "--no-progress"])
        #expect(result.status == 65, "\(result.stdout) \(result.stderr)")
        let lines = result.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let error = lines.last { $0["code"] != nil || $0["error"] != nil }
        #expect("\(error ?? [:])".contains("bad_captions") && "\(error ?? [:])".contains("clips[0].captions[0].language"), "\(result.stdout)")
        #expect(!FileManager.default.fileExists(atPath: "\(out)/master.m3u8"))
    }
}
