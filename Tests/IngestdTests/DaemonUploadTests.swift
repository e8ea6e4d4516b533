import IngestdTesting
import Foundation
import Testing
import Transcode

/// Upload directories through the real daemon: a good one is joined and published, hostile ones
/// are refused with the field or limit named, and nothing outside the spool is read.
@Suite struct DaemonUploadTests {
    func reason(_ spool: String, _ id: String) throws -> [String: Any] {
        let data = try Data(contentsOf: URL(fileURLWithPath: "\(spool)/rejected/\(id)/reason.json"))
        return try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
    }

    /// Builds an upload directory outside the spool from the sample upload, with `manifest`.
    func upload(_ base: String, _ name: String, manifest: String?, prepare: (String) throws -> Void = { _ in }) throws -> String {
        let directory = "\(base)/staging/\(name)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for file in ["clip1.mp4", "clip2.mp4", "clip3.webm", "music.ogg"] {
            try FileManager.default.copyItem(atPath: Paths.sample("upload/\(file)"), toPath: "\(directory)/\(file)")
        }
        if let manifest { try Data(manifest.utf8).write(to: URL(fileURLWithPath: "\(directory)/upload.json")) }
        try prepare(directory)
        return directory
    }

    @Test func uploadDirectoriesArePublishedOrRefusedByField() throws {
        let base = Paths.scratch("daemon-uploads")
        try? FileManager.default.removeItem(atPath: base)
        let spool = "\(base)/spool", cdn = "\(base)/cdn"
        let daemon = try Daemon(spool: spool, cdn: cdn)
        let secret = "\(base)/secret.mp4"
        try FileManager.default.copyItem(atPath: Paths.sample("portrait_rotated.mp4"), toPath: secret)
        let good = try String(contentsOfFile: Paths.sample("upload/upload.json"), encoding: .utf8)
        let cases: [(String, String?, (String) throws -> Void)] = [
            ("good", good, { _ in }),
            ("same-id", good, { _ in }),
            ("traversal", #"{"id": "t", "clips": [{"file": "../../secret.mp4"}]}"#, { _ in }),
            ("absolute", #"{"id": "a", "clips": [{"file": "\#(secret)"}]}"#, { _ in }),
            ("link-out", #"{"id": "l", "clips": [{"file": "clip1.mp4"}, {"file": "out.mp4"}]}"#, { directory in
                try FileManager.default.createSymbolicLink(atPath: "\(directory)/out.mp4", withDestinationPath: secret)
            }),
            ("huge-manifest", #"{"id": "h", "clips": [{"file": "clip1.mp4"}], "metadata": {"x": ""# + String(repeating: "y", count: 100_000) + "\"}}", { _ in }),
            ("no-manifest", nil, { _ in }),
            ("unknown-field", #"{"id": "u", "clips": [{"file": "clip1.mp4", "speed": 2}]}"#, { _ in }),
            ("many-files", good, { directory in
                for index in 0..<Admission(limits: Preset.builtIn.limits).maxUploadFiles {
                    _ = FileManager.default.createFile(atPath: "\(directory)/f\(index)", contents: nil)
                }
            }),
        ]
        for (name, manifest, prepare) in cases {
            let directory = try upload(base, name, manifest: manifest, prepare: prepare)
            #expect(rename(directory, "\(spool)/incoming/\(name)") == 0)
        }
        // A directory that keeps growing in place past the size limit is refused, not watched forever.
        let growing = "\(spool)/incoming/growing"
        try FileManager.default.createDirectory(atPath: growing, withIntermediateDirectories: true)
        let handle = try #require(FileHandle(forWritingAtPath: { _ = FileManager.default.createFile(atPath: "\(growing)/part.mp4", contents: nil); return "\(growing)/part.mp4" }()))
        let chunk = Data(count: 4 << 20)
        for _ in 0..<14 { handle.write(chunk) }  // 56 MB and counting
        try Daemon.wait(timeout: 120, "every upload to be filed") {
            Daemon.settled(spool) && Daemon.entries("\(spool)/archive").count + Daemon.entries("\(spool)/rejected").count >= cases.count + 1
        }
        try handle.close()

        let archived = Daemon.entries("\(spool)/archive")
        #expect(archived.count == 2 && archived.allSatisfy { $0.hasPrefix("good-") || $0.hasPrefix("same_id-") }, "\(archived)")
        for id in archived {
            let manifest = try JSONDecoder().decode(ReadyManifest.self, from: Data(contentsOf: URL(fileURLWithPath: "\(cdn)/\(id)/manifest.json")))
            // Two uploads carrying the same id never overwrite each other: the CDN path is the job id.
            #expect(manifest.uploadID == "sample-upload-1" && manifest.sources.count == 3)
            #expect(try Checks.frames(Checks.published("\(cdn)/\(id)", "video.mp4")).count == 210)
            // The original upload directory is kept whole in the archive.
            #expect(Set(Daemon.entries("\(spool)/archive/\(id)/upload/good") + Daemon.entries("\(spool)/archive/\(id)/upload/same-id"))
                .isSuperset(of: ["upload.json", "clip1.mp4", "music.ogg"]))
        }
        let expectations: [String: (code: String, mentions: String)] = [
            "traversal": ("bad_upload", "clips[0].file"), "absolute": ("bad_upload", "absolute"),
            "link-out": ("bad_upload", "clips[1].file"), "huge-manifest": ("bad_upload", "65536"),
            "no-manifest": ("bad_upload", "upload.json"), "unknown-field": ("bad_upload", "clips[0].speed"),
            "growing": ("too_large", "over the limit"), "many-files": ("too_large", "more than \(Admission(limits: Preset.builtIn.limits).maxUploadFiles) files"),
        ]
        let rejected = Daemon.entries("\(spool)/rejected")
        #expect(rejected.count == expectations.count, "\(rejected)")
        for id in rejected {
            let name = try #require(expectations.keys.first { id.hasPrefix($0.replacingOccurrences(of: "-", with: "_") + "-") }, "unexpected \(id)")
            let body = try reason(spool, id)
            #expect(body["code"] as? String == expectations[name]!.code, "\(id): \(body)")
            #expect((body["message"] as? String ?? "").contains(expectations[name]!.mentions), "\(id): \(body)")
        }
        #expect(FileManager.default.fileExists(atPath: secret), "the file outside the spool is untouched")
        #expect(Daemon.entries(cdn).sorted() == archived.sorted(), "nothing published for a refused upload")
        // `status --job`: the store's one read of a job, published or refused; a name outside the spool is no job.
        func job(_ id: String) throws -> (status: Int32, body: [String: Any]) {
            let run = try Tool.run(Paths.binary, ["status", "--spool", spool, "--job", id, "--json"])
            return (run.status, (try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]) ?? [:])
        }
        let refusedJob = try job(try #require(rejected.first { $0.hasPrefix("many_files-") }))
        #expect(refusedJob.body["state"] as? String == "rejected" && (refusedJob.body["reason"] as? [String: Any])?["code"] as? String == "too_large",
                "\(refusedJob.body)")
        let publishedJob = try job(try #require(archived.first))
        #expect(publishedJob.body["state"] as? String == "published" && publishedJob.body["attempts"] as? Int == 1, "\(publishedJob.body)")
        #expect(try job("../rejected").status == 66 && job("no-such-job").status == 66)
        _ = daemon
    }
}
