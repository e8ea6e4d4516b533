import Foundation
import IngestdTesting
import ObjectStorage
import Testing

/// The SigV4 signer (#30) against botocore's own (PyPI `botocore`: `S3SigV4Auth`,
/// `S3SigV4QueryAuth`), byte for byte: the same requests, credentials and instant on both sides.
struct S3SignerTests {
    struct Case {
        var method: String
        var url: String
        var headers: [(String, String)] = []
        var body = ""
        var token: String?
        var presign: Int?
    }

    static var botocore: Bool { (try? Tool.run("python3", ["-c", "import botocore"]))?.status == 0 }

    static func key(_ key: String) -> String { S3Signer.encode(key, keepingSlashes: true) }

    static let cases: [Case] = [
        Case(method: "PUT", url: "http://127.0.0.1:8333/media/\(key("clip 1/ä+b=c (final).m3u8"))",
             headers: [("Content-Type", "application/vnd.apple.mpegurl"), ("Cache-Control", "max-age=2,  public")], body: "#EXTM3U\n"),
        Case(method: "PUT", url: "https://s3.eu-west-1.amazonaws.com/media/a/b.ts", headers: [("content-type", "video/mp2t")],
             body: String(repeating: "x", count: 1000), token: "FwoGZXIvYXdzEJr//////////wEaDM+token"),
        Case(method: "GET", url: "http://localhost:8333/media?list-type=2&prefix=\(S3Signer.encode("a b/c"))&max-keys=1000"),
        Case(method: "POST", url: "http://127.0.0.1:8333/media/big.mp4?uploads"),
        Case(method: "PUT", url: "http://127.0.0.1:8333/media/big.mp4?partNumber=2&uploadId=\(S3Signer.encode("2~abc/def=="))", body: "part"),
        Case(method: "HEAD", url: "http://media.s3.amazonaws.com/\(key("uploads/u-1/clip.mp4"))", headers: [("User-Agent", "ingestd")]),
        Case(method: "GET", url: "http://127.0.0.1:8333/media/\(key("out/v1/master.m3u8"))", presign: 3600),
        Case(method: "GET", url: "https://s3.eu-west-1.amazonaws.com/media/\(key("a b/ü.mp4"))", token: "session/token+=", presign: 604_800),
    ]

    @Test(.enabled(if: Self.botocore, "botocore is not installed (pip install botocore)"))
    func signaturesMatchBotocoreByteForByte() throws {
        let time = 1_795_608_000.0  // 2026-11-25T12:00:00Z
        let input = try Self.cases.map { item -> String in
            var spec: [String: Any] = ["method": item.method, "url": item.url, "headers": item.headers.map { [$0.0, $0.1] }, "body": item.body,
                                       "access": "AKIDEXAMPLE", "secret": "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "region": "eu-west-1",
                                       "time": time]
            if let token = item.token { spec["token"] = token }
            if let presign = item.presign { spec["presign"] = presign }
            return String(decoding: try JSONSerialization.data(withJSONObject: spec), as: UTF8.self)
        }.joined(separator: "\n") + "\n"
        let script = "\(Paths.root)/Tests/IngestdTesting/sigv4_reference.py"
        let stdin = Paths.scratch("sigv4-input.ndjson")
        try input.write(toFile: stdin, atomically: true, encoding: .utf8)
        let reference = try Tool.run("/bin/sh", ["-c", "python3 \"$0\" < \"$1\"", script, stdin])
        #expect(reference.status == 0, "\(reference.stderr)")
        let answers = reference.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(answers.count == Self.cases.count)
        for (item, answer) in zip(Self.cases, answers) {
            let signer = S3Signer(credentials: S3Credentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
                                                             sessionToken: item.token), region: "eu-west-1")
            let url = try #require(URL(string: item.url))
            if let expires = item.presign {
                let mine = signer.presign(method: item.method, url: url, expires: expires, date: Date(timeIntervalSince1970: time))
                let theirs = try #require(URL(string: answer["url"] as? String ?? ""))
                #expect(Self.query(mine) == Self.query(theirs), "\(item.url)\nours   \(mine)\ntheirs \(theirs)")
                #expect(mine.path == theirs.path && mine.host == theirs.host)
            } else {
                let headers = signer.sign(method: item.method, url: url, headers: item.headers,
                                          payloadHash: S3Signer.sha256Hex(Data(item.body.utf8)), date: Date(timeIntervalSince1970: time))
                let theirs = answer["headers"] as? [String: String] ?? [:]
                for (name, value) in headers {
                    #expect(theirs[name] == value, "\(item.method) \(item.url): \(name)\nours   \(value)\ntheirs \(theirs[name] ?? "-")")
                }
                #expect(headers.count == (item.token == nil ? 3 : 4))
            }
        }
    }

    /// `name=value` pairs of a URL's query, as sent (still percent-encoded).
    static func query(_ url: URL) -> [String: String] {
        let query = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedQuery ?? ""
        return Dictionary(query.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            return (parts[0], parts.count > 1 ? parts[1] : "")
        }) { $1 }
    }
}
