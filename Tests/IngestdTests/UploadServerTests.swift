import Foundation
import IngestdTesting
import Testing
import Uploads

/// `ingestd serve` (issue #31) with real clients: tuspy, curl and raw sockets, and the spool
/// daemon taking what was uploaded.
@Suite(.enabled(if: UploadServerProcess.tuspyAvailable, "tuspy is not installed (make test-deps-python)"))
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

        let client = Process()
        client.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        client.arguments = ["python3", UploadServerProcess.client, "upload", link.upload, source, "--chunk", "\(1 << 20)",
                            "--pause-after", "10", "--go", "\(base)/go"]
        let output = Pipe()
        client.standardOutput = output
        client.standardError = FileHandle(forWritingAtPath: server.log)
        try client.run()
        let paused = output.fileHandleForReading.availableData
        #expect(String(decoding: paused, as: UTF8.self).hasPrefix("paused"))

        server.kill9()
        try server.start()
        FileManager.default.createFile(atPath: "\(base)/go", contents: nil)
        client.waitUntilExit()
        let report = output.fileHandleForReading.readDataToEndOfFile()
        let result = try #require(try JSONSerialization.jsonObject(with: report) as? [String: Any], "\(String(decoding: report, as: UTF8.self))")
        #expect(client.terminationStatus == 0)
        #expect(result["resumed_from"] as? Int == 10 << 20, "resumed exactly where the killed server had acknowledged: \(result)")
        #expect(result["sent"] as? Int == size, "no byte sent twice: \(result)")

        // One job, with the token's id, holding the bytes as sent.
        let job = "\(server.spool)/work/clip-7f3a"
        #expect(Daemon.entries("\(job)/upload") == ["phone clip.mp4"])
        #expect(try Self.sha256("\(job)/upload/phone clip.mp4") == (try Self.sha256(source)))
        var status = try Self.request("GET", link.status)
        #expect(status.status == 200 && status.body.contains("\"state\":\"queued\""), "\(status.body)")

        let watch = try WorkerProcess(["watch", "--spool", server.spool, "--cdn", server.cdn], log: "\(base)/watch.log")
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
        FileManager.default.createFile(atPath: chunk, contents: Data((0..<65_536).map { UInt8($0 % 251) }))
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
        FileManager.default.createFile(atPath: eleven, contents: Data(count: 11_000_000))
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

        // Another upload's token, and termination.
        let other = try server.link("someone-else")
        let otherToken = String(other.upload.split(separator: "=").last!)
        #expect(try Self.request("HEAD", "\(server.url)/v1/uploads/refusals?token=\(otherToken)", Self.tus).status == 401)
        #expect(try Self.request("DELETE", upload, Self.tus).status == 204)
        #expect(try Self.request("HEAD", upload, Self.tus).status == 404)
        #expect(!FileManager.default.fileExists(atPath: "\(uploads)/refusals/job"), "the bytes are gone")
        #expect(try Self.create(link.upload, length: 100).status == 409, "a terminated upload's token stays used")
        #expect(Daemon.entries("\(server.spool)/work").isEmpty, "nothing became a job")

        let metrics = try Self.request("GET", "\(server.url)/metrics").body
        for reason in ["token_invalid", "token_expired", "too_large", "token_used", "bad_offset", "checksum_mismatch", "over_length"] {
            #expect(metrics.contains("reason=\"\(reason)\""), "refusals counted by reason: \(reason)")
        }
    }
}
