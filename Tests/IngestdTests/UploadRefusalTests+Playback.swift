import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Ingest
import IngestdTesting
import Testing
import Uploads

extension UploadRefusalTests {
    /// Signed playback through `serve`'s router (issue #67): a link signed `--playback signed`
    /// makes the job signed whatever the phone's metadata says; the phone's `playback` metadata
    /// may ask `signed` of a plain link; a policy that is neither is refused (400), nothing made.
    @Test func theLinksPlaybackIsTheJobsAndThePhoneMayOnlyAskStricter() async throws {
        let spool = Paths.scratch("upload-refusals-playback") + "/spool"
        let (length, offset, metadataName) = (HTTPField.Name("Upload-Length")!, HTTPField.Name("Upload-Offset")!, HTTPField.Name("Upload-Metadata")!)
        try await Self.server("playback").test(.router) { client in
            let cases: [(String, PlaybackPolicy?, String?, PlaybackPolicy?)] = [
                ("p-link", .signed, "playback cHVibGlj", .signed),    // the phone says public: the link wins
                ("p-phone", nil, "playback c2lnbmVk", .signed),      // the phone asks signed
                ("p-plain", nil, "filename Y2xpcC5tcDQ=", nil),      // nobody asks: the host's default decides
            ]
            for (id, link, metadata, expected) in cases {
                let token = UploadToken(scope: .upload, id: id, maxBytes: 1_000_000, expires: Int64(Date().timeIntervalSince1970) + 3600,
                                        playback: link).encoded(secret: Self.secret)
                let headers = Self.fields([(length, "10")] + (metadata.map { [(metadataName, $0)] } ?? []))
                let created = try await Self.send(client, "/v1/uploads", .post, headers, token: token)
                #expect(created.status == .created, "\(id): \(created.status) \(String(buffer: created.body))")
                let body = Self.fields([(offset, "0"), (.contentType, "application/offset+octet-stream")])
                let patched = try await Self.send(client, "/v1/uploads/\(id)/1", .patch, body, token: token)
                #expect(patched.status == .noContent, "\(id): \(patched.status)")
                let record = JSONFile.read(JobRecord.self, from: "\(spool)/work/\(id)/job.json")
                #expect(record != nil && record?.playback == expected, "\(id): \(String(describing: record))")
            }
            let token = UploadToken(scope: .upload, id: "p-bad", maxBytes: 1_000_000, expires: Int64(Date().timeIntervalSince1970) + 3600)
                .encoded(secret: Self.secret)
            let refused = try await Self.send(client, "/v1/uploads", .post, Self.fields([(length, "10"), (metadataName, "playback cHJpdmF0ZQ==")]),
                                              token: token)
            #expect(refused.status == .badRequest && String(buffer: refused.body).contains("playback must be public or signed"),
                    "\(refused.status) \(String(buffer: refused.body))")
            #expect(!FileManager.default.fileExists(atPath: "\(spool)/uploading/p-bad/files"), "nothing made for a refused upload")
        }
    }

    /// The tus header and `pairs`.
    static func fields(_ pairs: [(HTTPField.Name, String)]) -> HTTPFields {
        var all = Self.tus
        for (name, value) in pairs { all[name] = value }
        return all
    }
}
