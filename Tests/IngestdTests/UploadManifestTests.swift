import IngestdTesting
import Foundation
import Testing
import Ingest
import Transcode

/// `upload.json` validation: every mistake is refused with the field it concerns, and nothing
/// outside the upload directory is ever named as an input.
@Suite struct UploadManifestTests {
    /// A fresh upload directory holding two (tiny, not necessarily valid) media files.
    func upload(_ manifest: String, name: String = #function) throws -> String {
        let directory = Paths.scratch("upload-\(name.prefix { $0 != "(" })")
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: "\(directory)/clips", withIntermediateDirectories: true)
        for file in ["a.mp4", "clips/b.mov", "song.m4a"] {
            try Data(repeating: 0, count: 16).write(to: URL(fileURLWithPath: "\(directory)/\(file)"))
        }
        try Data(manifest.utf8).write(to: URL(fileURLWithPath: "\(directory)/upload.json"))
        return directory
    }

    func field(_ manifest: String, name: String = #function, prepare: (String) throws -> Void = { _ in }) throws -> String? {
        let directory = try upload(manifest, name: name)
        try prepare(directory)
        do {
            _ = try Upload.open(directory, limits: Preset.builtIn.limits)
            return nil
        } catch let error as IngestError {
            guard case .badUpload(let path, let field, _) = error else { return "\(error)" }
            #expect(path == "\(directory)/upload.json")
            #expect(error.code == "bad_upload" && ExitStatus(for: error) == .badInput)
            return field
        }
    }

    @Test func aValidManifestOpensEveryFileInsideTheUpload() throws {
        let directory = try upload("""
            {"id": "u-1", "clips": [{"file": "a.mp4"}, {"file": "clips/b.mov", "start": 0.5, "end": 2}],
             "audio": {"file": "song.m4a", "offset": 3, "mode": "mix", "clipGain": -2, "musicGain": -9, "loop": true},
             "metadata": {"caption": "hi", "nested": {"n": [1, true, null]}}}
            """)
        let upload = try Upload.open(directory, limits: Preset.builtIn.limits)
        #expect(upload.id == "u-1")
        #expect(upload.clips == [ClipSource(path: "\(directory)/a.mp4"), ClipSource(path: "\(directory)/clips/b.mov", startSeconds: 0.5, endSeconds: 2)])
        #expect(upload.music == MusicSource(path: "\(directory)/song.m4a", offsetSeconds: 3, mode: .mix, clipGainDB: -2,
                                            musicGainDB: -9, loop: true, fadeOutSeconds: 1))
        // The files are open: their sizes are the ones on disk when validated.
        #expect(upload.clipFiles.map(\.size) == [16, 16] && upload.musicFile?.size == 16)
        #expect(upload.metadata["nested"] == .object(["n": .array([.number(1), .bool(true), .null])]))
    }

    @Test func aPlainFileIsAOneClipUpload() throws {
        let upload = try Upload.open(Paths.sample("portrait_rotated.mp4"), limits: Preset.builtIn.limits)
        #expect(upload.clips == [ClipSource(path: Paths.sample("portrait_rotated.mp4"))])
        #expect(upload.id == nil && upload.music == nil)
    }

    @Test func schemaMistakesNameTheField() throws {
        #expect(try field(#"{"id": "x", "clips": [{"file": "a.mp4", "speed": 2}]}"#) == "clips[0].speed")
        #expect(try field(#"{"id": "x", "clips": [{"file": "a.mp4"}], "extra": 1}"#) == "extra")
        #expect(try field(#"{"clips": [{"file": "a.mp4"}]}"#) == "id")
        #expect(try field(#"{"id": "x", "clips": [{"file": 3}]}"#) == "clips[0].file")
        #expect(try field(#"{"id": "x", "clips": []}"#) == "clips")
        #expect(try field(#"{"id": "../x", "clips": [{"file": "a.mp4"}]}"#) == "id")
        #expect(try field(#"{"id": "x", "clips": [{"file": "a.mp4"}], "audio": {"file": "song.m4a", "mode": "blend"}}"#) == "audio.mode")
        #expect(try field("{not json") == "(document)")
    }

    /// U+0000 cannot be stored in PostgreSQL's jsonb (issue #29): refused by field, before a
    /// job could burn its attempts on a database error.
    @Test func aNULInMetadataIsRefusedByField() throws {
        #expect(try field(#"{"id": "x", "clips": [{"file": "a.mp4"}], "metadata": {"caption": "a\u0000b"}}"#) == "metadata.caption")
        #expect(try field(#"{"id": "x", "clips": [{"file": "a.mp4"}], "metadata": {"tags": ["ok", "\u0000"]}}"#) == "metadata.tags[1]")
        #expect(try field(#"{"id": "x", "clips": [{"file": "a.mp4"}], "metadata": {"a": {"b\u0000": 1}}}"#) == "metadata.a")
        #expect(try field(#"{"id": "x", "clips": [{"file": "a.mp4"}], "metadata": {"ok": "\u00e9\ud83d\ude00"}}"#) == nil,
                "other characters pass")
    }

    /// Bytes no JSON reader (nor jsonb) takes: invalid UTF-8 is refused saying where, and a lone
    /// surrogate escape never reaches the database as one (#29 item 3).
    @Test func invalidUTF8AndLoneSurrogatesAreRefused() throws {
        var bytes = Data(#"{"id": "x", "clips": [{"file": "a.mp4"}], "metadata": {"caption": "ab"#.utf8)
        bytes.append(contentsOf: [0xC3, 0x28])  // a lead byte followed by no continuation
        bytes.append(contentsOf: Data(#""}}"#.utf8))
        let directory = try upload("{}", name: "invalid-utf8")
        try bytes.write(to: URL(fileURLWithPath: "\(directory)/upload.json"))
        #expect(throws: IngestError.self) { try Upload.open(directory, limits: Preset.builtIn.limits) }
        do {
            _ = try Upload.open(directory, limits: Preset.builtIn.limits)
        } catch {
            #expect("\(error)".contains("not valid UTF-8 (at byte 69)"), "\(error)")
        }
        // A lone surrogate: refused, or read as U+FFFD; never passed on as a lone surrogate.
        let directory2 = try upload(#"{"id": "x", "clips": [{"file": "a.mp4"}], "metadata": {"caption": "a\ud800b"}}"#, name: "lone-surrogate")
        if let upload = try? Upload.open(directory2, limits: Preset.builtIn.limits) {
            guard case .string(let caption) = upload.metadata["caption"] else { Issue.record("caption: \(String(describing: upload.metadata["caption"]))"); return }
            #expect(!caption.unicodeScalars.contains { (0xD800...0xDFFF).contains($0.value) }, "\(caption.unicodeScalars.map(\.value))")
        }
    }

    @Test func badTrimsAndLevelsNameTheField() throws {
        #expect(try field(#"{"id": "x", "clips": [{"file": "a.mp4", "start": -1}]}"#) == "clips[0].start")
        #expect(try field(#"{"id": "x", "clips": [{"file": "a.mp4"}, {"file": "a.mp4", "start": 3, "end": 2}]}"#) == "clips[1].end")
        #expect(try field(#"{"id": "x", "clips": [{"file": "a.mp4", "start": 1, "end": 1}]}"#) == "clips[0].end")
        #expect(try field(#"{"id": "x", "clips": [{"file": "a.mp4"}], "audio": {"file": "song.m4a", "offset": -2}}"#) == "audio.offset")
        #expect(try field(#"{"id": "x", "clips": [{"file": "a.mp4"}], "audio": {"file": "song.m4a", "musicGain": 40}}"#) == "audio.musicGain")
        #expect(try field(#"{"id": "x", "clips": [{"file": "a.mp4"}], "audio": {"file": "song.m4a", "clipGain": -3}}"#) == "audio.clipGain",
                "clipGain only means something when mixing")
    }

    @Test func pathsThatLeaveTheUploadAreRefused() throws {
        #expect(try field(#"{"id": "x", "clips": [{"file": "../a.mp4"}]}"#) == "clips[0].file")
        #expect(try field(#"{"id": "x", "clips": [{"file": "clips/../../etc/passwd"}]}"#) == "clips[0].file")
        #expect(try field(#"{"id": "x", "clips": [{"file": "/etc/passwd"}]}"#) == "clips[0].file")
        #expect(try field(#"{"id": "x", "clips": [{"file": "missing.mp4"}]}"#) == "clips[0].file")
        #expect(try field(#"{"id": "x", "clips": [{"file": "clips"}]}"#) == "clips[0].file", "a directory is not a clip")
        #expect(try field(#"{"id": "x", "clips": [{"file": "upload.json"}]}"#) == "clips[0].file")
        #expect(try field(#"{"id": "x", "clips": [{"file": "out.mp4"}]}"#) { directory in
            try FileManager.default.createSymbolicLink(atPath: "\(directory)/out.mp4", withDestinationPath: Paths.sample("portrait_rotated.mp4"))
        } == "clips[0].file")
        #expect(try field(#"{"id": "x", "clips": [{"file": "a.mp4"}], "audio": {"file": "dev"}}"#) { directory in
            try FileManager.default.createSymbolicLink(atPath: "\(directory)/dev", withDestinationPath: "/dev/zero")
        } == "audio.file")
        #expect(try field(#"{"id": "x", "clips": [{"file": "loop"}]}"#) { directory in
            try FileManager.default.createSymbolicLink(atPath: "\(directory)/loop", withDestinationPath: "\(directory)/loop")
        } == "clips[0].file")
        // Links are never followed, not even one that stays inside the upload, nor a linked directory.
        #expect(try field(#"{"id": "x", "clips": [{"file": "again.mp4"}]}"#) { directory in
            try FileManager.default.createSymbolicLink(atPath: "\(directory)/again.mp4", withDestinationPath: "a.mp4")
        } == "clips[0].file")
        #expect(try field(#"{"id": "x", "clips": [{"file": "linked/b.mov"}]}"#) { directory in
            try FileManager.default.createSymbolicLink(atPath: "\(directory)/linked", withDestinationPath: "clips")
        } == "clips[0].file")
        #expect(try field(#"{"id": "x", "clips": [{"file": "fifo.mp4"}]}"#) { directory in
            guard mkfifo("\(directory)/fifo.mp4", 0o644) == 0 else { throw CocoaError(.fileWriteUnknown) }
        } == "clips[0].file", "a FIFO is refused without blocking")
        #expect(try field(#"{"id": "x", "clips": [{"file": "./a.mp4"}]}"#) == "clips[0].file")
    }

    @Test func theManifestItselfMustBeASmallRegularFile() throws {
        let huge = #"{"id": "x", "clips": [{"file": "a.mp4"}], "metadata": {"pad": ""# + String(repeating: "x", count: 70_000) + "\"}}"
        #expect(try field(huge) == "(file)")
        #expect(try field("{}") { directory in
            try FileManager.default.removeItem(atPath: "\(directory)/upload.json")
            try FileManager.default.createSymbolicLink(atPath: "\(directory)/upload.json", withDestinationPath: "/etc/hostname")
        } == "(file)")
        #expect(try field("{}") { directory in
            try FileManager.default.removeItem(atPath: "\(directory)/upload.json")
        } == "(file)")
        let many = (0..<21).map { _ in #"{"file": "a.mp4"}"# }.joined(separator: ",")
        #expect(try field(#"{"id": "x", "clips": [\#(many)]}"#) == "clips")
    }
}
