import Foundation
import IngestdTesting
import Testing
import Uploads

/// `ingestd serve` (issue #31) with real clients: tuspy, curl and raw sockets, and the spool
/// daemon taking what was uploaded.
@Suite(.offTheSharedPool, .enabled(if: UploadServerProcess.tuspyAvailable, "tuspy is not installed (make test-deps-python)"))
struct UploadServerTests {
    struct Answer {
        var status: Int
        var headers: [String: String]
        var body: String
    }

    /// One request with curl; `data` is sent as the body (a file path with `@`, or text).
    static func request(_ method: String, _ url: String, _ headers: [String: String] = [:], data: String? = nil,
                        extra: [String] = []) throws -> Answer {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("curl-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var arguments = ["-s", "-D", "\(directory)/h", "-o", "\(directory)/b", "-w", "%{http_code}", "--max-time", "60"]
        arguments += method == "HEAD" ? ["-I"] : ["-X", method]
        for (name, value) in headers { arguments += ["-H", "\(name): \(value)"] }
        if let data { arguments += ["--data-binary", data] }
        let result = try Tool.run("curl", arguments + extra + [url])
        var fields: [String: String] = [:]
        for line in ((try? String(contentsOfFile: "\(directory)/h", encoding: .utf8)) ?? "").split(whereSeparator: \.isNewline) {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return Answer(status: Int(result.stdout) ?? 0, headers: fields,
                      body: (try? String(contentsOfFile: "\(directory)/b", encoding: .utf8)) ?? "")
    }

    static let tus = ["Tus-Resumable": "1.0.0"]

    static func create(_ url: String, length: Int, _ more: [String: String] = [:]) throws -> Answer {
        try request("POST", url, tus.merging(["Upload-Length": "\(length)"].merging(more) { $1 }) { $1 })
    }

    static func patch(_ url: String, offset: Int, file: String, _ more: [String: String] = [:], extra: [String] = []) throws -> Answer {
        try request("PATCH", url, tus.merging(["Upload-Offset": "\(offset)", "Content-Type": "application/offset+octet-stream"]
            .merging(more) { $1 }) { $1 }, data: "@\(file)", extra: extra)
    }

    static func sha256(_ path: String) throws -> String {
        try Tool.run("sha256sum", [path]).stdout.split(separator: " ").first.map(String.init) ?? ""
    }

    /// `serve --preset` and `upload-url --preset` hold uploads to that preset's limits, not the
    /// built-in one's: the server announces its 10 MiB (`Tus-Max-Size`), a link it signs allows
    /// that much by default and an 11 MB creation is refused (413) before a byte is read; the
    /// files an upload set may have follow the preset's clips, in a link and at the server.
    @Test func serveAndUploadURLHoldUploadsToThePresetsLimits() throws {
        let preset = Paths.scratch("upload-preset.json")
        try PresetFile.write(preset, name: "phone", limits: ["maxBytes": 10_485_760, "maxClips": 3])
        let server = try UploadServerProcess(base: Paths.scratch("upload-preset"), arguments: ["--preset", preset])
        let options = try Self.request("OPTIONS", "\(server.url)/v1/uploads", Self.tus)
        #expect(options.headers["tus-max-size"] == "10485760", "\(options.headers)")
        let link = try server.link("phone-1", extra: ["--preset", preset])
        let large = try Self.create(link.upload, length: 11_000_000)
        #expect(large.status == 413 && large.body.contains("10485760"), "\(large.status) \(large.body)")
        #expect(try Self.create(link.upload, length: 100_000).status == 201)

        // A set of 37 files (upload.json, 3 clips, a sound track, 32 caption files) is the most this preset allows.
        func sign(_ id: String, files: Int, _ more: [String]) throws -> Tool.Result {
            try Tool.run(Paths.binary, ["upload-url", "--id", id, "--server", server.url, "--upload-secret-file", server.secretFile,
                                        "--files", "\(files)"] + more)
        }
        #expect(try sign("phone-2", files: 37, ["--preset", preset]).status == 0)
        let refused = try sign("phone-3", files: 38, ["--preset", preset])
        #expect(refused.status != 0 && refused.stderr.contains("2 to 37"), "\(refused.stderr)")
        // Signed with the built-in preset (54 files), the server still holds it to its own.
        let wide = try sign("phone-4", files: 38, ["--json"])
        let url = try #require((try JSONSerialization.jsonObject(with: Data(wide.stdout.utf8)) as? [String: Any])?["upload_url"] as? String)
        let tooMany = try Self.create(url, length: 100)
        #expect(tooMany.status == 413 && tooMany.body.contains("at most 37"), "\(tooMany.status) \(tooMany.body)")
    }

    /// An upload left unfinished past its token's expiry is removed with what it had stored
    /// (tus `expiration`), by the sweep a server makes at start and every minute: here the
    /// restarted server's clock is two hours on (faketime), past the link's hour.
    @Test func anUnfinishedUploadIsRemovedOnceItsTokenExpires() throws {
        let server = try UploadServerProcess(base: Paths.scratch("upload-expiry"))
        let link = try server.link("late-1", extra: ["--expires", "1h"])
        let created = try Self.create(link.upload, length: 1000)
        let location = try #require(created.headers["location"], "\(created.status) \(created.body)")
        let upload = location.hasPrefix("http") ? location : server.url + location
        let part = Paths.scratch("upload-expiry-part")
        try Data(repeating: 7, count: 400).write(to: URL(fileURLWithPath: part))
        #expect(try Self.patch(upload, offset: 0, file: part).status == 204)
        #expect(try Self.request("HEAD", upload, Self.tus).headers["upload-offset"] == "400")
        let stored = { (try? FileManager.default.contentsOfDirectory(atPath: "\(server.spool)/uploading")) ?? [] }
        #expect(stored().contains("late-1"), "\(stored())")
        server.kill9()
        server.launcher = ["/usr/bin/env", "FAKETIME_DONT_FAKE_MONOTONIC=1", "/usr/bin/faketime", "-f", "+2h"]
        try server.start()
        // Counted once the sweep is done, after the upload's files went: wait for the count too.
        try Daemon.wait(timeout: 30, "the expired upload to be removed and counted") {
            !stored().contains("late-1") && ((try? Self.request("GET", "\(server.url)/metrics").body) ?? "").contains("uploads_expired_total 1")
        }
        let gone = try Self.request("HEAD", upload, Self.tus).status
        #expect(gone == 401, "the upload's link expired with it: \(gone)")
        let metrics = try Self.request("GET", "\(server.url)/metrics").body
        #expect(metrics.contains("uploads_expired_total 1"), "\(metrics)")
    }

    /// tuspy uploads 30 MB in 1 MiB chunks; the server is killed (SIGKILL) after 10 of them and
    /// started again; the client resumes from the offset the server reports, which is exactly
    /// what it had acknowledged. The spool daemon then publishes the upload under the token's id,
    /// the original byte-identical to the source, and the status API says so.
    @Test func tuspyResumesAfterTheServerIsKilledAndTheUploadIsPublished() throws {
        let base = Paths.scratch("serve-resume")
        let server = try UploadServerProcess(base: base)
        let source = "\(base)/phone clip.mp4"
        let made = try Tool.run("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=720x1280:rate=30:duration=13",
                                           "-f", "lavfi", "-i", "sine=frequency=440:duration=13", "-c:v", "libx264", "-preset", "ultrafast",
                                           "-qp", "2", "-c:a", "aac", "-shortest", source])
        #expect(made.status == 0, "\(made.stderr)")
        let size = Checks.size(source)
        #expect(size > 28_000_000 && size < 50_000_000, "a 30 MB upload: \(size)")
        let link = try server.link("clip-7f3a")

        let client = try PausedUpload(link.upload, source: source, chunk: 1 << 20, pauseAfter: 10, go: "\(base)/go", log: server.log)
        #expect(client.paused().hasPrefix("paused"))

        server.kill9()
        try server.start()
        let report = client.resume()
        let result = try #require(try JSONSerialization.jsonObject(with: report) as? [String: Any], "\(String(decoding: report, as: UTF8.self))")
        #expect(client.process.terminationStatus == 0)
        #expect(result["resumed_from"] as? Int == 10 << 20, "resumed exactly where the killed server had acknowledged: \(result)")
        #expect(result["sent"] as? Int == size, "no byte sent twice: \(result)")

        // One job, with the token's id, holding the bytes as sent.
        let job = "\(server.spool)/work/clip-7f3a"
        #expect(Daemon.entries("\(job)/upload") == ["phone clip.mp4"])
        #expect(try Self.sha256("\(job)/upload/phone clip.mp4") == (try Self.sha256(source)))
        var status = try Self.request("GET", link.status)
        #expect(status.status == 200 && status.body.contains("\"state\":\"queued\""), "\(status.body)")

        let watch = try WorkerProcess(["watch", "--spool", server.spool, "--cdn", server.cdn], log: "\(base)/watch.log")
        // Played while it is made: the job process runs only in the test's 50 ms steps until the
        // daemon shows it, then stays stopped while the status API is read, then goes on.
        let jobProcess = try Daemon.jobProcess(of: watch.pid, timeout: 180)
        try Daemon.step(jobProcess, timeout: 180, "the video to be shown while it is made") {
            FileManager.default.fileExists(atPath: "\(job)/shown.json")
        }
        status = try Self.request("GET", link.status)
        kill(jobProcess, SIGCONT)
        let growing = try #require(try JSONSerialization.jsonObject(with: Data(status.body.utf8)) as? [String: Any])
        #expect(growing["state"] as? String == "processing" && growing["playable"] as? Bool == true
                && growing["master_url"] as? String == "clip-7f3a/master.m3u8", "\(growing)")
        try Daemon.wait(timeout: 180, "the upload to be published") {
            FileManager.default.fileExists(atPath: "\(server.spool)/archive/clip-7f3a")
        }
        _ = watch
        status = try Self.request("GET", link.status)
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(status.body.utf8)) as? [String: Any])
        #expect(parsed["state"] as? String == "completed" && parsed["master_url"] as? String == "clip-7f3a/master.m3u8", "\(parsed)")
        let master = "\(server.cdn)/clip-7f3a/master.m3u8"
        let probed = try Tool.ffprobe(["-show_entries", "format=duration", master])
        let duration = Double(((probed["format"] as? [String: Any])?["duration"] as? String) ?? "") ?? 0
        #expect(abs(duration - 13) < 0.2, "the published ladder lasts as the upload: \(duration)")
        let poster = try #require(parsed["poster_url"] as? String)
        #expect(FileManager.default.fileExists(atPath: "\(server.cdn)/\(poster)"), "\(poster)")
    }

    /// Every refusal the tus protocol and the tokens call for, with curl: each answered with its
    /// status before a byte of the body is stored, and nothing half-made left behind.
    @Test func everyRefusalIsAnsweredBeforeAnythingIsStored() throws {
        let base = Paths.scratch("serve-refusals")
        let server = try UploadServerProcess(base: base)
        let chunk = "\(base)/chunk", eleven = "\(base)/eleven"
        _ = FileManager.default.createFile(atPath: chunk, contents: Data((0..<65_536).map { UInt8($0 % 251) }))
        let uploads = "\(server.spool)/uploading"

        let options = try Self.request("OPTIONS", "\(server.url)/v1/uploads")
        #expect(options.status == 204 && options.headers["tus-version"] == "1.0.0" && options.headers["tus-max-size"] == "52428800")
        #expect(options.headers["tus-extension"]?.split(separator: ",").sorted() == ["checksum", "creation", "creation-with-upload", "expiration", "termination"])
        #expect(options.headers["tus-checksum-algorithm"]?.contains("sha1") == true)

        // Tokens: none, tampered, expired, for status rather than upload.
        let link = try server.link("refusals", extra: ["--max-bytes", "10000000"])
        let bare = "\(server.url)/v1/uploads"
        #expect(try Self.create(bare, length: 100).status == 401)
        var tampered = link.upload
        tampered = tampered.replacingOccurrences(of: ".10000000.", with: ".40000000.")
        #expect(tampered != link.upload)
        #expect(try Self.create(tampered, length: 100).status == 401, "a raised limit breaks the signature")
        let expired = UploadToken(scope: .upload, id: "refusals", maxBytes: 1000, expires: Int64(Date().timeIntervalSince1970) - 1)
        let old = try Self.create("\(bare)?token=\(expired.encoded(secret: server.secretKey))", length: 100)
        #expect(old.status == 401 && old.body.contains("expired"), "\(old.body)")
        #expect(try Self.create(link.status.replacingOccurrences(of: "/v1/jobs/refusals", with: "/v1/uploads"), length: 100).status == 401)
        #expect(Daemon.entries(uploads).isEmpty, "nothing created by a refused token")

        // Versions and lengths: 412, deferred length, over the token's 10 MB (413 with no body read).
        #expect(try Self.request("POST", link.upload, ["Tus-Resumable": "0.2.2", "Upload-Length": "100"]).status == 412)
        #expect(try Self.request("POST", link.upload, ["Tus-Resumable": "1.0.0", "Upload-Defer-Length": "1"]).status == 400)
        _ = FileManager.default.createFile(atPath: eleven, contents: Data(count: 11_000_000))
        let large = try Self.request("POST", link.upload, Self.tus.merging(["Upload-Length": "11000000", "Content-Type": "application/offset+octet-stream"]) { $1 },
                                     data: "@\(eleven)")
        #expect(large.status == 413 && large.body.contains("10000000"), "a 10 MB token cannot upload 11 MB: \(large.status) \(large.body)")
        #expect(Daemon.entries(uploads).isEmpty)

        // A good creation; the same token again is refused.
        let created = try Self.create(link.upload, length: 100_000, ["Upload-Metadata": "filename \(Data("../../etc/passwd".utf8).base64EncodedString())"])
        #expect(created.status == 201 && created.headers["upload-expires"]?.hasSuffix("GMT") == true, "\(created)")
        let location = try #require(created.headers["location"])
        let upload = server.url + location
        #expect(try Self.create(link.upload, length: 100_000).status == 409, "one token, one upload")

        // PATCH: wrong offset, wrong content type, wrong checksum (discarded), past the length.
        #expect(try Self.patch(upload, offset: 5, file: chunk).status == 409)
        #expect(try Self.request("PATCH", upload, Self.tus.merging(["Upload-Offset": "0", "Content-Type": "text/plain"]) { $1 },
                                 data: "@\(chunk)").status == 415)
        let wrong = try Self.patch(upload, offset: 0, file: chunk, ["Upload-Checksum": "sha1 \(Data(count: 20).base64EncodedString())"])
        #expect(wrong.status == 460, "\(wrong.status) \(wrong.body)")
        #expect(try Self.request("HEAD", upload, Self.tus).headers["upload-offset"] == "0", "the mismatched chunk was discarded")
        let sha1 = Data(try Tool.run("sh", ["-c", "sha1sum '\(chunk)' | cut -c1-40 | xxd -r -p | base64"]).stdout.utf8)
        let right = try Self.patch(upload, offset: 0, file: chunk, ["Upload-Checksum": "sha1 \(String(decoding: sha1, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))"])
        #expect(right.status == 204 && right.headers["upload-offset"] == "65536", "\(right)")
        let past = try Self.patch(upload, offset: 65_536, file: eleven)
        #expect(past.status == 413, "a body past Upload-Length: \(past.status)")
        let head = try Self.request("HEAD", upload, Self.tus)
        #expect(head.status == 200 && head.headers["upload-offset"] == "65536" && head.headers["upload-length"] == "100000"
                && head.headers["cache-control"] == "no-store")
        #expect(Daemon.entries("\(uploads)/refusals/job/upload") == ["upload"], "a hostile file name is not used")

        // An upload in progress deleted (`ingestd delete`): it ends, and every later request says so (410).
        let doomed = try server.link("doomed")
        let doomedUpload = server.url + (try #require(try Self.create(doomed.upload, length: 100_000).headers["location"]))
        #expect(try Self.patch(doomedUpload, offset: 0, file: chunk).status == 204)
        try FileManager.default.createDirectory(atPath: "\(base)/cdn", withIntermediateDirectories: true)
        let deleted = try Tool.run(Paths.binary, ["delete", "--spool", server.spool, "--cdn", "\(base)/cdn", "--reason-code", "owner",
                                                  "--reason", "cancelled in the app", "doomed"])
        #expect(deleted.status == 0, "\(deleted.stdout) \(deleted.stderr)")
        #expect(!FileManager.default.fileExists(atPath: "\(uploads)/doomed"), "its bytes are gone")
        let goneHead = try Self.request("HEAD", doomedUpload, Self.tus)
        #expect(goneHead.status == 410, "\(goneHead.status)")
        #expect(try Self.patch(doomedUpload, offset: 65_536, file: chunk).status == 410)
        let again = try Self.create(try server.link("doomed").upload, length: 100)
        #expect(again.status == 410 && again.body.contains("deleted"), "a deleted id is never used again: \(again.status) \(again.body)")
        #expect(try Self.request("GET", doomed.status).body.contains("\"deleted\""), "its status says deleted")

        // Another upload's token, and termination.
        let other = try server.link("someone-else")
        let otherToken = String(other.upload.split(separator: "=").last!)
        #expect(try Self.request("HEAD", "\(server.url)/v1/uploads/refusals/1?token=\(otherToken)", Self.tus).status == 401)
        #expect(try Self.request("DELETE", upload, Self.tus).status == 204)
        #expect(try Self.request("HEAD", upload, Self.tus).status == 404, "a terminated upload is gone")
        #expect(!FileManager.default.fileExists(atPath: "\(uploads)/refusals/job"), "the bytes are gone")
        #expect(try Self.create(link.upload, length: 100).status == 409, "a terminated upload's token stays used")
        #expect(Daemon.entries("\(server.spool)/work").isEmpty, "nothing became a job")

        let metrics = try Self.request("GET", "\(server.url)/metrics").body
        for reason in ["token_invalid", "token_expired", "too_large", "token_used", "bad_offset", "checksum_mismatch", "over_length"] {
            #expect(metrics.contains("reason=\"\(reason)\""), "refusals counted by reason: \(reason)")
        }
    }

    /// Two clients on one upload: the second is refused (409) while the first writes, and the bytes
    /// are the first's. A client that breaks off keeps what the server received (nothing before the
    /// break is sent again); a server killed mid-body acknowledges nothing it had not fsynced.
    @Test func concurrentWritersBrokenBodiesAndAKillMidBody() throws {
        let base = Paths.scratch("serve-writers")
        let server = try UploadServerProcess(base: base)
        let file = "\(base)/source.bin"
        let bytes = Data((0..<6_000_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 11) })
        _ = FileManager.default.createFile(atPath: file, contents: bytes)
        func part(_ range: Range<Int>) throws -> String {
            let path = "\(base)/part-\(range.lowerBound)"
            _ = FileManager.default.createFile(atPath: path, contents: bytes.subdata(in: range))
            return path
        }
        let link = try server.link("writers")
        let upload = server.url + (try #require(try Self.create(link.upload, length: bytes.count).headers["location"]))
        func offset() throws -> Int { Int(try Self.request("HEAD", upload, Self.tus).headers["upload-offset"] ?? "") ?? -1 }

        // A slow writer holds the upload; a second writer at the same offset is refused meanwhile.
        let first = try part(0..<2_000_000)
        let slow = Process()
        slow.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        slow.arguments = ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "PATCH", "-H", "Tus-Resumable: 1.0.0",
                          "-H", "Upload-Offset: 0", "-H", "Content-Type: application/offset+octet-stream", "--limit-rate", "500k",
                          "--data-binary", "@\(first)", upload]
        let slowOut = Pipe()
        slow.standardOutput = slowOut
        try slow.run()
        // The gauge counts a request before it takes the upload's lock; its first block written
        // (256 KiB, at the acknowledged offset) is written under the lock.
        try Daemon.wait(timeout: 60, "the slow writer to hold the upload") {
            ((try? Self.request("GET", "\(server.url)/metrics").body) ?? "").contains("uploads_in_progress 1")
                && Checks.size("\(server.spool)/uploading/writers/job/upload/upload") > 0
        }
        let second = try Self.patch(upload, offset: 0, file: try part(0..<1000))
        #expect(second.status == 409, "\(second.status) \(second.body)")
        slow.waitUntilExit()
        #expect(String(decoding: slowOut.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self) == "204")
        #expect(try offset() == 2_000_000)

        // A client that breaks off (curl gives up after 1.5 s): what arrived is kept and acknowledged.
        let broken = try Self.patch(upload, offset: 2_000_000, file: try part(2_000_000..<4_000_000), extra: ["--limit-rate", "400k", "--max-time", "1.5"])
        #expect(broken.status == 0, "curl gave up")
        var kept = 0
        try Daemon.wait(timeout: 10, "the broken-off bytes to be acknowledged") {
            kept = (try? offset()) ?? 0
            return kept > 2_000_000
        }
        #expect(kept < 4_000_000, "at most what was sent: \(kept)")

        // kill -9 mid-body: after the restart the offset is what was acknowledged before.
        let dying = Process()
        dying.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        dying.arguments = ["curl", "-s", "-o", "/dev/null", "-X", "PATCH", "-H", "Tus-Resumable: 1.0.0", "-H", "Upload-Offset: \(kept)",
                           "-H", "Content-Type: application/offset+octet-stream", "--limit-rate", "300k", "--data-binary",
                           "@\(try part(kept..<bytes.count))", upload]
        try dying.run()
        usleep(1_500_000)
        server.kill9()
        dying.waitUntilExit()
        try server.start()
        #expect(try offset() == kept, "nothing unacknowledged counts after a crash")
        let rest = try Self.patch(upload, offset: kept, file: try part(kept..<bytes.count))
        #expect(rest.status == 204 && rest.headers["upload-offset"] == "\(bytes.count)", "\(rest)")
        #expect(try Self.sha256("\(server.spool)/work/writers/upload/upload") == (try Self.sha256(file)), "the bytes are the source's, in order")
        // Done: a retried last PATCH, a HEAD and a restart enqueue nothing more.
        #expect(try Self.patch(upload, offset: kept, file: try part(kept..<bytes.count)).status == 409)
        #expect(try offset() == bytes.count)
        let metrics = try Self.request("GET", "\(server.url)/metrics").body
        #expect(metrics.contains("ingestd_uploads_completed_total 1\n"), "\(metrics)")
        server.kill9()
        try server.start()
        #expect(try offset() == bytes.count)
        #expect(Daemon.entries("\(server.spool)/work") == ["writers"] && Daemon.entries("\(server.spool)/work/writers/upload") == ["upload"])
    }

    /// Slowloris: 100 connections trickling a body one byte a second (without a token, or to no
    /// route), and one
    /// with a valid upload, while a phone uploads: the phone's upload completes, the refused ones
    /// are closed at once and the valid one when it falls under the minimum rate (its bytes kept).
    @Test func tricklingConnectionsDoNotStopOthers() throws {
        let base = Paths.scratch("serve-slowloris")
        let server = try UploadServerProcess(base: base, arguments: ["--read-timeout", "2", "--min-rate", "1000"])
        let slowLink = try server.link("slow")
        let location = try #require(try Self.create(slowLink.upload, length: 1_000_000).headers["location"])
        func trickling(_ path: String, _ count: Int) throws -> (Process, Pipe) {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["python3", UploadServerProcess.client, "trickle", "127.0.0.1", "\(server.port)", path, "\(count)", "8"]
            let out = Pipe()
            process.standardOutput = out
            try process.run()
            return (process, out)
        }
        let (trickle, out) = try trickling("/v1/uploads/x/1?token=none", 50)
        let (lost, lostOut) = try trickling("/v1/no-such-route", 50)
        let (valid, validOut) = try trickling(location, 1)
        usleep(1_000_000)
        let link = try server.link("phone")
        let started = Date()
        let phone = try Tool.run("python3", [UploadServerProcess.client, "upload", link.upload, Paths.sample("portrait_rotated.mp4"), "--chunk", "262144"])
        #expect(phone.status == 0, "\(phone.stderr)")
        // A hang guard, not a timing bound (Python and tuspy start slowly on a loaded host).
        #expect(Date().timeIntervalSince(started) < 40, "the phone's upload is not held up")
        #expect(FileManager.default.fileExists(atPath: "\(server.spool)/work/phone"))
        trickle.waitUntilExit()
        let result = try #require(try JSONSerialization.jsonObject(with: out.fileHandleForReading.readDataToEndOfFile()) as? [String: Int])
        #expect(result["closed"] == 50, "every refused trickling connection was closed by the server: \(result)")
        lost.waitUntilExit()
        let unrouted = try #require(try JSONSerialization.jsonObject(with: lostOut.fileHandleForReading.readDataToEndOfFile()) as? [String: Int])
        #expect(unrouted["closed"] == 50, "and those the router answers 404: \(unrouted)")
        valid.waitUntilExit()
        let slow = try #require(try JSONSerialization.jsonObject(with: validOut.fileHandleForReading.readDataToEndOfFile()) as? [String: Int])
        #expect(slow["closed"] == 1, "the upload trickling under the minimum rate was ended: \(slow)")
        let kept = try Self.request("HEAD", server.url + location, Self.tus).headers["upload-offset"].flatMap { Int($0) } ?? 0
        #expect(kept > 0 && kept < 20, "the bytes it did send are kept: \(kept)")
        #expect(try Self.request("GET", "\(server.url)/metrics").body.contains("reason=\"too_slow\""))
    }

    /// Clips, a sound track, a caption track and `upload.json` as one upload set (`upload-url
    /// --files 6`): six tus uploads to one URL, each named by its tus filename; nothing is a job
    /// until the last byte of the last file, then exactly one job whose upload directory the
    /// spool daemon joins and publishes, with its captions (`/v1/jobs` lists them). A seventh
    /// file, a nameless one, and a set past its byte limit are refused.
    @Test func anUploadSetBecomesOneJobWhenItsLastFileLands() throws {
        let base = Paths.scratch("serve-set")
        let server = try UploadServerProcess(base: base)
        let source = "\(base)/source"
        try? FileManager.default.removeItem(atPath: source)
        try FileManager.default.copyItem(atPath: Paths.sample("upload"), toPath: source)
        try "WEBVTT\n\n00:00:00.500 --> 00:00:01.500\nfrom the phone\n".write(toFile: "\(source)/en.vtt", atomically: true, encoding: .utf8)
        var json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: "\(source)/upload.json"))) as? [String: Any])
        json["captions"] = [["file": "en.vtt", "language": "en"]]
        try JSONSerialization.data(withJSONObject: json).write(to: URL(fileURLWithPath: "\(source)/upload.json"))
        let names = ["upload.json", "en.vtt", "clip1.mp4", "clip2.mp4", "clip3.webm", "music.ogg"]
        let link = try server.link("set-1", extra: ["--files", "6", "--max-bytes", "100000"])
        func metadata(_ name: String) -> String { "filename \(Data(name.utf8).base64EncodedString())" }
        #expect(try Self.create(link.upload, length: 10).status == 400, "a file of a set needs its name")
        #expect(try Self.create(link.upload, length: 100_001, ["Upload-Metadata": metadata("big.mp4")]).status == 413)

        var locations: [String] = []
        for name in names {
            let created = try Self.create(link.upload, length: Checks.size("\(source)/\(name)"), ["Upload-Metadata": metadata(name)])
            #expect(created.status == 201, "\(name): \(created.status) \(created.body)")
            locations.append(server.url + (created.headers["location"] ?? ""))
        }
        #expect(try Self.create(link.upload, length: 10, ["Upload-Metadata": metadata("extra.mp4")]).status == 409, "six files, no seventh")
        for (name, location) in zip(names, locations).dropLast() {
            #expect(try Self.patch(location, offset: 0, file: "\(source)/\(name)").status == 204)
        }
        #expect(Daemon.entries("\(server.spool)/work").isEmpty, "not a job while a file is missing")
        let waiting = try Self.request("GET", link.status).body
        #expect(waiting.contains("\"state\":\"uploading\"") && !waiting.contains("\"progress\":100"), "\(waiting)")
        let last = try Self.patch(locations.last!, offset: 0, file: "\(source)/music.ogg")
        #expect(last.status == 204)
        #expect(Daemon.entries("\(server.spool)/work") == ["set-1"] && Daemon.entries("\(server.spool)/work/set-1/upload") == ["set-1"])
        for name in names {
            #expect(try Self.sha256("\(server.spool)/work/set-1/upload/set-1/\(name)") == (try Self.sha256("\(source)/\(name)")), "\(name)")
        }
        #expect(try Self.patch(locations.last!, offset: 0, file: "\(source)/music.ogg").status == 409, "a retried last PATCH changes nothing")

        let watch = try WorkerProcess(["watch", "--spool", server.spool, "--cdn", server.cdn], log: "\(base)/watch.log")
        try Daemon.wait(timeout: 180, "the upload set to be published") {
            FileManager.default.fileExists(atPath: "\(server.spool)/archive/set-1")
        }
        _ = watch
        let manifest = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: "\(server.cdn)/set-1/manifest.json"))) as? [String: Any])
        #expect((manifest["sources"] as? [Any])?.count == 3 && manifest["music"] != nil, "three clips joined under the song")
        let status = try Self.request("GET", link.status).body
        #expect(status.contains("\"state\":\"completed\"") && status.contains("\"language\":\"en\"") && status.contains("captions-en.vtt"), "\(status)")
        // The track the status names is there, whole (a path from the CDN root: serve has no public URL here).
        let captions = (try? JSONSerialization.jsonObject(with: Data(status.utf8)) as? [String: Any])?["captions"] as? [[String: Any]]
        let track = try #require(captions?.first?["track_url"] as? String, "\(status)")
        let named = try String(contentsOfFile: "\(server.cdn)/\(track)", encoding: .utf8)
        #expect(named.hasPrefix("WEBVTT") && named.contains("00:00:00.500 --> 00:00:01.500\nfrom the phone"), "\(track): \(named)")
    }
}
