import IngestdTesting
import Foundation
import Ingest
import Testing
import Transcode

/// Uploads are hostile: no file outside an upload is ever read (playlists, concat lists, links,
/// FIFOs), no upload name can meet the spool's own files, no number can trap, and claims and
/// repairs never race. Each test here failed before the containment work.
@Suite(.serialized) struct ContainmentTests {
    /// A video outside every upload, with a marker in its metadata and a length (3.7 s) and size
    /// (208×120) no sample has: if any output comes from it, the marker or the shape shows.
    static let marker = "CANARY-\(UUID().uuidString)"

    static func canary() async throws -> String {
        try await Fixtures.shared.generated("canary-secret.mp4", [
            "-f", "lavfi", "-i", "testsrc2=s=208x120:r=30:d=3.7", "-f", "lavfi", "-i", "sine=f=1234:d=3.7",
            "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac", "-metadata", "comment=\(marker)",
        ])
    }

    /// An HLS playlist whose one entry is `target` (what the well-known attack uploads).
    static func playlist(to target: String) -> String {
        "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:4\n#EXTINF:3.7,\n\(target)\n#EXT-X-ENDLIST\n"
    }

    /// Fails if any file under `roots` holds the canary's marker, or any manifest has its shape.
    static func expectNoCanary(in roots: [String], marker: String = ContainmentTests.marker) {
        for root in roots {
            for case let relative as String in FileManager.default.enumerator(atPath: root) ?? FileManager.DirectoryEnumerator() {
                let path = "\(root)/\(relative)"
                var info = stat()  // a link kept as an upload is not read through
                guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG,
                      let data = FileManager.default.contents(atPath: path) else { continue }
                #expect(data.range(of: Data(marker.utf8)) == nil, "the canary's bytes reached \(path)")
                if relative.hasSuffix("manifest.json"),
                   let manifest = try? JSONDecoder().decode(ReadyManifest.self, from: data) {
                    #expect(abs(manifest.durationSeconds - 3.7) > 0.05 && manifest.height != 120, "\(path) is the canary transcoded")
                }
            }
        }
    }

    func errorCode(_ result: Tool.Result) -> String? {
        let body = try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        return (body?["error"] as? [String: Any])?["code"] as? String
    }

    @Test func playlistsAndListsAreRefusedFromTheShell() async throws {
        let canary = try await Self.canary()
        let base = Paths.scratch("contain-shell")
        try? FileManager.default.removeItem(atPath: base)
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        let inputs: [(String, String, String)] = [
            ("x.m3u8", Self.playlist(to: canary), "'hls'"),
            ("disguised.mp4", Self.playlist(to: canary), "'hls'"),
            ("file-url.mov", Self.playlist(to: "file://\(canary)"), "'hls'"),
            ("list.mp4", "ffconcat version 1.0\nfile '\(canary)'\n", "'concat'"),
        ]
        for (name, body, detected) in inputs {
            let path = "\(base)/\(name)"
            try body.write(toFile: path, atomically: true, encoding: .utf8)
            let out = "\(base)/out-\(name)"
            let result = try Tool.run(Paths.binary, ["transcode", path, "--out", out, "--json"])
            #expect(result.status == 65, "\(name): \(result.stderr)")
            #expect(errorCode(result) == "unsupported_container", "\(name): \(result.stdout)")
            #expect(result.stderr.contains(path) && result.stderr.contains(detected), "names the file and what it is: \(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: out))
            let probe = try Tool.run(Paths.binary, ["probe", path])
            #expect(probe.status == 65, "probe refuses \(name) too")
        }
        // The same playlist as a clip, and as the sound track, of an upload directory.
        for field in ["clip", "audio"] {
            let upload = "\(base)/upload-\(field)"
            try FileManager.default.createDirectory(atPath: upload, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: Paths.sample("upload/clip1.mp4"), toPath: "\(upload)/clip1.mp4")
            try Self.playlist(to: canary).write(toFile: "\(upload)/evil.mp4", atomically: true, encoding: .utf8)
            let manifest = field == "clip"
                ? #"{"id": "p", "clips": [{"file": "clip1.mp4"}, {"file": "evil.mp4"}]}"#
                : #"{"id": "p", "clips": [{"file": "clip1.mp4"}], "audio": {"file": "evil.mp4"}}"#
            try manifest.write(toFile: "\(upload)/upload.json", atomically: true, encoding: .utf8)
            let result = try Tool.run(Paths.binary, ["transcode", upload, "--out", "\(base)/out-\(field)", "--json"])
            #expect(result.status == 65 && errorCode(result) == "unsupported_container", "\(field): \(result.stdout)")
            #expect(result.stderr.contains("\(upload)/evil.mp4"))
        }
        Self.expectNoCanary(in: [base])
    }

    @Test func playlistsAreRefusedThroughTheDaemon() async throws {
        let canary = try await Self.canary()
        let base = Paths.scratch("contain-daemon")
        try? FileManager.default.removeItem(atPath: base)
        let spool = "\(base)/spool", cdn = "\(base)/cdn"
        let daemon = try Daemon(spool: spool, cdn: cdn)
        let staged = "\(base)/staged"
        try FileManager.default.createDirectory(atPath: "\(staged)/dir", withIntermediateDirectories: true)
        try Self.playlist(to: canary).write(toFile: "\(staged)/clip.mp4", atomically: true, encoding: .utf8)
        try FileManager.default.copyItem(atPath: Paths.sample("upload/clip1.mp4"), toPath: "\(staged)/dir/clip1.mp4")
        try Self.playlist(to: canary).write(toFile: "\(staged)/dir/evil.mp4", atomically: true, encoding: .utf8)
        try #"{"id": "d", "clips": [{"file": "clip1.mp4"}, {"file": "evil.mp4"}]}"#.write(toFile: "\(staged)/dir/upload.json", atomically: true, encoding: .utf8)
        #expect(rename("\(staged)/clip.mp4", "\(spool)/incoming/clip.mp4") == 0)
        #expect(rename("\(staged)/dir", "\(spool)/incoming/dir") == 0)
        try Daemon.wait(timeout: 60, "both uploads to be rejected") {
            Daemon.settled(spool) && Daemon.entries("\(spool)/rejected").count == 2
        }
        for id in Daemon.entries("\(spool)/rejected") {
            let reason = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: "\(spool)/rejected/\(id)/reason.json"))) as? [String: Any]
            #expect(reason?["code"] as? String == "unsupported_container", "\(id): \(reason ?? [:])")
            #expect(Daemon.entries("\(spool)/rejected/\(id)/upload").count == 1, "the original is kept")
        }
        #expect(Daemon.entries(cdn).isEmpty, "nothing published")
        Self.expectNoCanary(in: [spool, cdn])
        _ = daemon
    }

    /// Every name an uploader can choose, including the job's own file names, a newline and
    /// bytes that are not UTF-8, is archived byte for byte under that name.
    @Test func bookkeepingNamesRoundTripIntoTheArchive() throws {
        let base = Paths.scratch("contain-names")
        try? FileManager.default.removeItem(atPath: base)
        let spool = "\(base)/spool", cdn = "\(base)/cdn"
        let daemon = try Daemon(spool: spool, cdn: cdn, extra: ["--jobs", "2"])
        let sample = Paths.sample("upload/clip1.mp4")
        let names: [[UInt8]] = ["result.json", "progress.json", "job.json", "reason.json", "manifest.json", "upload",
                                "upload.json", "new\nline.mp4"].map { Array($0.utf8) } + [Array("bad-".utf8) + [0xff, 0xfe, 0x0a] + Array(".mp4".utf8)]
        for (index, raw) in names.enumerated() {
            let hidden = "\(spool)/incoming/.part-\(index)"
            try FileManager.default.copyItem(atPath: sample, toPath: hidden)
            let target = Array("\(spool)/incoming/".utf8) + raw + [0]
            #expect(target.withUnsafeBufferPointer { rename(hidden, UnsafeRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self)) } == 0)
        }
        try Daemon.wait(timeout: 180, "every upload to be filed") {
            Daemon.settled(spool) && Daemon.entries("\(spool)/archive").count + Daemon.entries("\(spool)/rejected").count
                + Daemon.entries("\(spool)/failed").count == names.count
        }
        let archived = Daemon.entries("\(spool)/archive")
        #expect(archived.count == names.count, "every upload published: archive \(archived), rejected \(Daemon.entries("\(spool)/rejected"))")
        let original = try Data(contentsOf: URL(fileURLWithPath: sample))
        var found: [[UInt8]] = []
        for id in archived {
            let holder = "\(spool)/archive/\(id)/upload"
            let entries = Self.rawEntries(holder)
            #expect(entries.count == 1, "\(id): \(entries)")
            guard let raw = entries.first else { continue }
            found.append(raw)
            let path = Array(holder.utf8) + [UInt8(ascii: "/")] + raw + [0]
            let fd = path.withUnsafeBufferPointer { open(UnsafeRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self), O_RDONLY) }
            #expect(fd >= 0)
            var bytes = [UInt8](repeating: 0, count: original.count + 1)
            let count = read(fd, &bytes, bytes.count)
            close(fd)
            #expect(Data(bytes.prefix(max(0, count))) == original, "\(id): the original's bytes are untouched")
            #expect(FileManager.default.fileExists(atPath: "\(spool)/archive/\(id)/job.json"))
            #expect(FileManager.default.fileExists(atPath: "\(cdn)/\(id)/manifest.json"))
        }
        #expect(Set(found) == Set(names), "every name kept byte for byte")
        _ = daemon
    }

    static func rawEntries(_ directory: String) -> [[UInt8]] {
        guard let listing = opendir(directory) else { return [] }
        defer { closedir(listing) }
        var names: [[UInt8]] = []
        while let entry = readdir(listing) {
            let raw = withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix { $0 != 0 }) }
            if raw != [0x2e], raw != [0x2e, 0x2e] { names.append(raw) }
        }
        return names
    }

    /// A directory built in place, slower than `--settle`, is published once `upload.json` is
    /// written last; a file written in place is taken only once closed.
    @Test func slowInPlaceUploadsAreTakenWhenComplete() throws {
        let base = Paths.scratch("contain-inplace")
        try? FileManager.default.removeItem(atPath: base)
        let spool = "\(base)/spool", cdn = "\(base)/cdn"
        let daemon = try Daemon(spool: spool, cdn: cdn)  // --settle 0.5
        try Daemon.wait(timeout: 30, "the daemon to watch") { Daemon.events(spool).contains { $0["event"] as? String == "started" } }
        let directory = "\(spool)/incoming/trip"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for file in ["clip1.mp4", "clip2.mp4", "clip3.webm", "music.ogg"] {
            try FileManager.default.copyItem(atPath: Paths.sample("upload/\(file)"), toPath: "\(directory)/\(file)")
            usleep(700_000)  // slower than the settle time between files
        }
        // A file written in place, held open (not closed) for longer than the settle time.
        let descriptor = open("\(spool)/incoming/slow.mp4", O_WRONLY | O_CREAT | O_EXCL, 0o644)
        #expect(descriptor >= 0)
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        try handle.write(contentsOf: try Data(contentsOf: URL(fileURLWithPath: Paths.sample("hdr_hlg.mp4"))).prefix(10_000))
        sleep(2)
        #expect(FileManager.default.fileExists(atPath: directory), "not claimed without upload.json")
        #expect(FileManager.default.fileExists(atPath: "\(spool)/incoming/slow.mp4"), "not claimed while open for writing")
        #expect(Daemon.entries("\(spool)/rejected").isEmpty)
        try handle.write(contentsOf: try Data(contentsOf: URL(fileURLWithPath: Paths.sample("hdr_hlg.mp4"))).dropFirst(10_000))
        try handle.close()
        try FileManager.default.copyItem(atPath: Paths.sample("upload/upload.json"), toPath: "\(directory)/upload.json")
        try Daemon.wait(timeout: 120, "both uploads to be published") {
            Daemon.settled(spool) && Daemon.entries("\(spool)/archive").count == 2
        }
        #expect(Daemon.entries("\(spool)/rejected").isEmpty && Daemon.entries("\(spool)/failed").isEmpty)
        for id in Daemon.entries("\(spool)/archive") {
            let manifest = try JSONDecoder().decode(ReadyManifest.self, from: Data(contentsOf: URL(fileURLWithPath: "\(cdn)/\(id)/manifest.json")))
            #expect(manifest.durationSeconds > 1.9, "\(id): the complete upload was transcoded (\(manifest.durationSeconds) s)")
        }
        _ = daemon
    }

    /// Numbers at the edges never trap: they are refused as `bad_upload` naming the field.
    @Test func extremeNumbersInUploadJSONAreRefusedByField() throws {
        let base = Paths.scratch("contain-numbers")
        try? FileManager.default.removeItem(atPath: base)
        let cases: [(String, String)] = [
            (#"{"file": "clip1.mp4", "end": 1e300}"#, "clips[0].end"),
            (#"{"file": "clip1.mp4", "start": 1e300}"#, "clips[0].start"),
            (#"{"file": "clip1.mp4", "start": 100000}"#, "clips[0].start"),
            (#"{"file": "clip1.mp4", "start": "NaN"}"#, "clips[0].start"),
            (#"{"file": "clip1.mp4", "end": "Infinity"}"#, "clips[0].end"),
            (#"{"file": "clip1.mp4", "end": 99999999999999999999999}"#, "clips[0].end"),
        ]
        for (index, (clip, field)) in cases.enumerated() {
            let upload = "\(base)/u\(index)"
            try FileManager.default.createDirectory(atPath: upload, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: Paths.sample("upload/clip1.mp4"), toPath: "\(upload)/clip1.mp4")
            try #"{"id": "n", "clips": [\#(clip)]}"#.write(toFile: "\(upload)/upload.json", atomically: true, encoding: .utf8)
            for command in ["probe", "transcode"] {
                let arguments = command == "probe" ? [command, upload, "--json"] : [command, upload, "--out", "\(base)/out\(index)", "--json"]
                let result = try Tool.run(Paths.binary, arguments)
                #expect(result.status == 65, "\(command) \(clip): status \(result.status) \(result.stderr)")
                let body = try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
                let error = body?["error"] as? [String: Any]
                #expect(error?["code"] as? String == "bad_upload" && error?["field"] as? String == field, "\(command) \(clip): \(result.stdout)")
            }
        }
        // -0 is zero, not an error.
        let zero = "\(base)/zero"
        try FileManager.default.createDirectory(atPath: zero, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Paths.sample("upload/clip1.mp4"), toPath: "\(zero)/clip1.mp4")
        try #"{"id": "z", "clips": [{"file": "clip1.mp4", "start": -0}]}"#.write(toFile: "\(zero)/upload.json", atomically: true, encoding: .utf8)
        #expect(try Tool.run(Paths.binary, ["probe", zero]).status == 0)
    }

    /// Headers can lie about the picture size: the decoded frames are what the limit applies to.
    /// Here the stream's first SPS (what the probe sees) is 64×64, a later one 4200×4200.
    @Test func decodedPicturesCountAgainstThePixelLimit() async throws {
        let small = try await Fixtures.shared.generated("liar-small.h264", ["-f", "lavfi", "-i", "color=s=64x64:r=10:d=1",
                                                                          "-c:v", "libx264", "-preset", "ultrafast"])
        let huge = try await Fixtures.shared.generated("liar-huge.h264", ["-f", "lavfi", "-i", "color=s=4200x4200:r=10:d=0.2",
                                                                         "-c:v", "libx264", "-preset", "ultrafast", "-x264-params", "level=6.2"])
        let joined = Paths.scratch("liar-joined.h264")
        try (Data(contentsOf: URL(fileURLWithPath: small)) + Data(contentsOf: URL(fileURLWithPath: huge))).write(to: URL(fileURLWithPath: joined))
        let liar = try await Fixtures.shared.generated("liar-size.mkv", ["-r", "10", "-i", joined, "-c", "copy"])
        let probe = try Tool.ffprobe(["-show_entries", "stream=width", liar])
        #expect(probe.list("streams").first?.int("width") == 64, "the headers claim 64×64")
        let result = try Tool.run(Paths.binary, ["transcode", liar, "--out", Paths.scratch("liar-size-out"), "--json"])
        #expect(result.status == 65 && errorCode(result) == "limit_resolution", "\(result.stdout)")
        #expect(result.stderr.contains("4200x4200 (decoded)"))
    }

    /// The sound track is held to limits like the clips: its length, channels and sample rate.
    @Test func soundTrackLimitsApply() throws {
        let base = Paths.scratch("contain-sound")
        try? FileManager.default.removeItem(atPath: base)
        try FileManager.default.copyItem(atPath: Paths.sample("upload"), toPath: base)
        var preset = Preset.builtIn
        preset.limits.maxSoundTrackSeconds = 2
        let presetPath = Paths.scratch("contain-sound.json")
        try preset.canonicalJSON().write(to: URL(fileURLWithPath: presetPath))
        let result = try Tool.run(Paths.binary, ["probe", base, "--preset", presetPath, "--json"])
        #expect(result.status == 65 && errorCode(result) == "limit_sound_track_duration", "\(result.stdout)")
        #expect(result.stderr.contains("\(base)/music.ogg"))
        let hiRes = Paths.scratch("contain-sound/hires.wav")
        let made = try Tool.run("ffmpeg", ["-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "sine=d=0.5:sample_rate=768000",
                                            "-c:a", "pcm_s16le", hiRes])
        #expect(made.status == 0, "\(made.stderr)")
        try #"{"id": "s", "clips": [{"file": "clip1.mp4"}], "audio": {"file": "hires.wav"}}"#.write(toFile: "\(base)/upload.json", atomically: true, encoding: .utf8)
        let rate = try Tool.run(Paths.binary, ["probe", base, "--json"])
        #expect(rate.status == 65 && errorCode(rate) == "limit_sample_rate", "\(rate.stdout)")
    }

    /// An error after the rungs have finished (here the poster cannot be written) ends the job
    /// with that error; it used to wait forever for rung threads that had already ended.
    @Test(.timeLimit(.minutes(1))) func aFailureAfterTheRungsFinishedDoesNotHang() async throws {
        let out = Paths.scratch("contain-late-failure")
        try? FileManager.default.removeItem(atPath: out)
        let file = try SourceFile(path: Paths.sample("hdr_hlg.mp4"))
        let request = TranscodeRequest(input: file, outputDirectory: out, preset: .builtIn)
        let plan = try Transcoder.plan(request)
        for poster in plan.posters {  // a directory where the poster JPEG must go
            try FileManager.default.createDirectory(atPath: "\(out)/\(OutputLayout.posterName(poster))", withIntermediateDirectories: true)
        }
        await #expect(throws: TranscodeError.self) { _ = try await Transcoder.run(request) }
    }

    /// Preset numbers too: every one is bounded before it is used.
    @Test func extremePresetNumbersAreRefusedByField() throws {
        let cases: [(WritableKeyPath<Preset, Double>?, WritableKeyPath<Preset, Int>?, WritableKeyPath<Preset, Int64>?, Double, String)] = [
            (\.limits.maxDurationSeconds, nil, nil, 1e300, "limits.maxDurationSeconds"),
            (\.limits.maxFrameRate, nil, nil, 1e12, "limits.maxFrameRate"),
            (\.limits.maxSoundTrackSeconds, nil, nil, 1e300, "limits.maxSoundTrackSeconds"),
            (nil, \.limits.maxPixels, nil, 9.2e18, "limits.maxPixels"),
            (nil, \.rungs[0].maxrateKbps, nil, 9.2e18, "rungs[0].maxrateKbps"),
            (nil, \.video.segmentSeconds, nil, 1e9, "video.segmentSeconds"),
            (nil, nil, \.limits.maxBytes, 9.2e18, "limits.maxBytes"),
            (nil, \.preview.maxBytes, nil, 9.2e18, "preview.maxBytes"),
            (nil, \.preview.seconds, nil, 1e9, "preview.seconds"),
            (nil, \.preview.fps, nil, -9.2e18, "preview.fps"),
        ]
        for (double, int, int64, value, field) in cases {
            var preset = Preset.builtIn
            if let double { preset[keyPath: double] = value }
            if let int { preset[keyPath: int] = Int(value) }
            if let int64 { preset[keyPath: int64] = Int64(value) }
            #expect(throws: TranscodeError.self) { try Preset.decode(preset.canonicalJSON(), source: "t") }
            do {
                _ = try Preset.decode(preset.canonicalJSON(), source: "t")
            } catch TranscodeError.badPreset(_, let named, _) {
                #expect(named == field)
            }
        }
    }
}

/// Claims and repairs, driven step by step in-process: the lock always comes first.
@Suite struct ClaimRaceTests {
    func spool(_ name: String) throws -> Spool {
        let root = Paths.scratch("claims-\(name)")
        try? FileManager.default.removeItem(atPath: root)
        let layout = SpoolLayout(root: root)
        try layout.create()
        return Spool(layout: layout)
    }

    @Test func oneArrivalIsClaimedOnceAndTheLoserLeavesNothing() throws {
        let spool = try spool("once")
        try Data("x".utf8).write(to: URL(fileURLWithPath: "\(spool.layout.incoming)/a.mp4"))
        let arrival = try #require(spool.arrivals().first)
        let first = try spool.claim(arrival, cdn: nil)
        let second = try spool.claim(arrival, cdn: nil)
        let (record, lock) = try #require(first)
        #expect(second.map(\.0.id) == nil)
        #expect(Daemon.entries(spool.layout.directory(.work)) == [record.id], "the loser's job directory is gone")
        #expect(Daemon.entries(spool.layout.upload(record.id)) == ["a.mp4"])
        #expect(record.id.hasPrefix("a-") && record.id.count == 2 + 16, "64 random bits: \(record.id)")
        // While the claimant holds its lock, no orphan repair touches the job.
        #expect(spool.adoptOrphans(limit: 10).isEmpty)
        lock.release()
        #expect(spool.adoptOrphans(limit: 10).map(\.0.id) == [record.id], "released, it can be taken over")
    }

    @Test func repairsTakeTheLockBeforeTouchingAnything() throws {
        let spool = try spool("repair")
        let work = spool.layout.directory(.work)
        // A claim that died before becoming visible, and one still being made by a live process.
        try FileManager.default.createDirectory(atPath: "\(work)/.claim-dead", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: "\(work)/.claim-live", withIntermediateDirectories: true)
        let live = try #require(JobLock(directory: "\(work)/.claim-live"))
        // Visible jobs: one whose claimant is between rename and job.json (locked), one that died
        // there (unlocked), one that died before its upload was moved in (unlocked, empty).
        for id in ["held-1", "died-2", "empty-3"] {
            try FileManager.default.createDirectory(atPath: spool.layout.upload(id), withIntermediateDirectories: true)
        }
        try Data("v".utf8).write(to: URL(fileURLWithPath: "\(spool.layout.upload("held-1"))/h.mp4"))
        try Data("v".utf8).write(to: URL(fileURLWithPath: "\(spool.layout.upload("died-2"))/d.mp4"))
        let held = try #require(JobLock(directory: spool.layout.job("held-1")))

        let adopted = spool.adoptOrphans(limit: 10)
        #expect(adopted.map(\.0.id) == ["died-2"])
        #expect(adopted.first?.0.original == "d.mp4", "the record is rebuilt from the upload")
        #expect(!FileManager.default.fileExists(atPath: "\(work)/.claim-dead"))
        #expect(!FileManager.default.fileExists(atPath: "\(work)/empty-3"))
        #expect(FileManager.default.fileExists(atPath: "\(work)/.claim-live"), "a live claim is left alone")
        #expect(!FileManager.default.fileExists(atPath: "\(spool.layout.job("held-1"))/job.json"), "a held job is not repaired")
        #expect(Daemon.entries(spool.layout.upload("held-1")) == ["h.mp4"])
        held.release()
        live.release()
        let later = spool.adoptOrphans(limit: 10, now: Date())
        #expect(Set(later.map(\.0.id)) == ["held-1"], "died-2 is still held by the first adoption")
        _ = adopted
    }
}
