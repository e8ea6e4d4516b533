import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
@testable import Ingest
import IngestdTesting
import Testing
import Uploads

extension UploadRefusalTests {
    /// `DELETE /v1/jobs/{id}` through the router (#66): each bad token refused with its exact
    /// status and line and nothing recorded; an unknown id is 404; a good token records the
    /// tombstone, by `api`, with the app's reason (202).
    @Test func theAppsDeleteIsRefusedForEachBadTokenAndRecordedForAGoodOne() async throws {
        let spool = Paths.scratch("upload-refusals-delete") + "/spool"
        try await Self.server("delete").test(.router) { client in
            let job = "\(spool)/archive/clip-1"
            try FileManager.default.createDirectory(atPath: "\(job)/upload", withIntermediateDirectories: true)
            _ = FileManager.default.createFile(atPath: "\(job)/upload/clip.mp4", contents: Data("x".utf8))
            let path = "/v1/jobs/clip-1", past = Int64(Date().timeIntervalSince1970) - 1
            let cases: [(String?, HTTPResponse.Status, String)] = [
                (nil, .unauthorized, "no token (the URL's ?token=)"),
                (Self.token(.delete, "clip-1", secret: Array("another secret".utf8)), .unauthorized, "the token's signature does not match"),
                (Self.token(.delete, "clip-1", expires: past), .unauthorized, "the token has expired"),
                (Self.token(.delete, "clip-2"), .forbidden, "the token is for another upload"),
                (Self.token(.status, "clip-1"), .forbidden, "the token is not for this kind of request"),
                (Self.token(.upload, "clip-1"), .forbidden, "the token is not for this kind of request"),
            ]
            for (token, status, line) in cases {
                let response = try await client.execute(uri: token.map { "\(path)?token=\($0)" } ?? path, method: .delete)
                #expect(response.status == status && String(buffer: response.body) == line + "\n",
                        "\(line): \(response.status) \(String(buffer: response.body))")
            }
            #expect(!FileManager.default.fileExists(atPath: "\(spool)/deleted/clip-1.json"), "nothing recorded")
            let unknown = try await client.execute(uri: "/v1/jobs/nope?token=\(Self.token(.delete, "nope"))", method: .delete)
            #expect(unknown.status == .notFound)
            let good = try await client.execute(uri: "\(path)?token=\(Self.token(.delete, "clip-1"))", method: .delete,
                                                headers: [.contentType: "application/json"],
                                                body: ByteBuffer(string: #"{"code": "owner", "reason": "tapped delete"}"#))
            #expect(good.status == .accepted && String(buffer: good.body).contains("tapped delete"), "\(String(buffer: good.body))")
            let tombstone = JSONFile.read(Tombstone.self, from: "\(spool)/deleted/clip-1.json")
            #expect(tombstone?.reason == (try DeletionReason(code: .owner, text: "tapped delete", by: "api")))
        }
    }
}
