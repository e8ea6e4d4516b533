import Foundation
import IngestdTesting
import Testing
import Transcode
import Uploads

/// The signed upload and status tokens (`ingestd upload-url`, ``UploadLink``), and the API document.
struct UploadTokenTests {
    let secret = Array("0123456789abcdef0123456789abcdef".utf8)
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func aLinkCarriesTokensThatVerifyOnlyForTheirScopeAndUntilTheirExpiry() throws {
        let link = try UploadLink(id: "abc_123-x", server: "https://up.example.com/", secret: secret, maxBytes: 10_000_000,
                                  expiresIn: 3600, now: now)
        #expect(link.uploadURL.hasPrefix("https://up.example.com/v1/uploads?token=v1.upload.abc_123-x.10000000.1.1800003600."))
        #expect(link.statusURL.hasPrefix("https://up.example.com/v1/jobs/abc_123-x?token=v1.status.abc_123-x."))
        #expect(link.expiresAt == now.addingTimeInterval(3600))
        let upload = String(link.uploadURL.split(separator: "=").last!)
        let token = try UploadToken(verifying: upload, secret: secret, scope: .upload, now: now)
        #expect(token == UploadToken(scope: .upload, id: "abc_123-x", maxBytes: 10_000_000, files: 1, expires: 1_800_003_600))
        let set = try UploadLink(id: "s", server: "https://a", secret: secret, files: 5, now: now)
        #expect(try UploadToken(verifying: String(set.uploadURL.split(separator: "=").last!), secret: secret, scope: .upload, now: now).files == 5)
        #expect(throws: UploadToken.Refusal.expired) { try UploadToken(verifying: upload, secret: secret, scope: .upload, now: now.addingTimeInterval(3600)) }
        #expect(throws: UploadToken.Refusal.wrongScope) { try UploadToken(verifying: upload, secret: secret, scope: .status, now: now) }
        #expect(throws: UploadToken.Refusal.forged) { try UploadToken(verifying: upload, secret: Array(secret.reversed()), scope: .upload, now: now) }
        let status = String(link.statusURL.split(separator: "=").last!)
        #expect(try UploadToken(verifying: status, secret: secret, scope: .status, now: now.addingTimeInterval(3 * 86_400)).id == "abc_123-x",
                "the status token outlives the upload's")
    }

    @Test func aSignedPlaybackIsSignedIntoTheLinkAndCannotBeCutOff() throws {
        let link = try UploadLink(id: "p1", server: "https://a", secret: secret, expiresIn: 60, playback: .signed, now: now)
        let text = String(link.uploadURL.split(separator: "=").last!)
        #expect(text.hasPrefix("v1.upload.p1.52428800.1.1800000060.signed."), "\(text)")
        #expect(try UploadToken(verifying: text, secret: secret, scope: .upload, now: now).playback == .signed)
        // The same link without `.signed`: its MAC no longer matches.
        let cut = text.replacingOccurrences(of: ".signed.", with: ".")
        #expect(throws: UploadToken.Refusal.forged) { try UploadToken(verifying: cut, secret: secret, scope: .upload, now: now) }
        #expect(throws: UploadToken.Refusal.malformed) {
            try UploadToken(verifying: text.replacingOccurrences(of: ".signed.", with: ".public."), secret: secret, scope: .upload, now: now)
        }
    }

    @Test func everyChangedCharacterIsRefused() throws {
        let token = UploadToken(scope: .upload, id: "job", maxBytes: 1000, expires: 1_900_000_000).encoded(secret: secret)
        for index in token.indices {
            var changed = token
            let replacement: Character = token[index] == "A" ? "B" : "A"
            changed.replaceSubrange(index...index, with: String(replacement))
            #expect(throws: UploadToken.Refusal.self) { try UploadToken(verifying: changed, secret: secret, scope: .upload, now: now) }
        }
        for bad in [nil, "", "v1.upload.job.1000.1.1900000000", "v1.upload.job.1000.0.1900000000.\(token.split(separator: ".").last!)", "v2" + token.dropFirst(2), token + ".x", "v1.upload.../etc.1000.1900000000.\(token.split(separator: ".").last!)"] {
            #expect(throws: UploadToken.Refusal.self) { try UploadToken(verifying: bad, secret: secret, scope: .upload, now: now) }
        }
    }

    @Test func linksRefuseIDsLimitsAndServersTheyCannotSign() {
        #expect(throws: UploadLinkError.self) { try UploadLink(id: "../x", server: "https://a", secret: secret) }
        #expect(throws: UploadLinkError.self) { try UploadLink(id: "-x", server: "https://a", secret: secret) }
        #expect(throws: UploadLinkError.self) { try UploadLink(id: String(repeating: "a", count: 65), server: "https://a", secret: secret) }
        #expect(throws: UploadLinkError.self) { try UploadLink(id: "a", server: "https://a", secret: secret, maxBytes: 60_000_000) }
        #expect(throws: UploadLinkError.self) { try UploadLink(id: "a", server: "ftp://a", secret: secret) }
        #expect(throws: UploadLinkError.self) { try UploadLink(id: "a", server: "https://a", secret: secret, files: Admission(limits: Preset.builtIn.limits).maxUploadFiles + 1) }
        #expect(throws: UploadLinkError.self) { try UploadLink(id: "a", server: "https://a?x=1", secret: secret) }
        #expect(throws: UploadLinkError.self) { try UploadLink(id: "a", server: "https://a", secret: secret, expiresIn: 8 * 86_400) }
    }

    /// `ingestd upload-url`: JSON for the backend, exit 64 for a bad id, 78 for a secret others can read.
    @Test func theCommandPrintsJSONAndRefusesWithMeaningfulExitCodes() throws {
        let base = Paths.scratch("upload-url")
        try? FileManager.default.removeItem(atPath: base)
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        let secretFile = "\(base)/upload.secret"
        _ = FileManager.default.createFile(atPath: secretFile, contents: Data("upsec_\(Data(secret).base64EncodedString())\n".utf8),
                                       attributes: [.posixPermissions: 0o600])
        let ok = try Tool.run(Paths.binary, ["upload-url", "--id", "v1", "--server", "http://127.0.0.1:8080", "--upload-secret-file", secretFile,
                                             "--max-bytes", "1000", "--expires", "30m", "--json"])
        #expect(ok.status == 0, "\(ok.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(ok.stdout.utf8)) as? [String: String])
        #expect(Set(object.keys) == ["upload_url", "status_url", "expires_at"])
        let token = String(try #require(object["upload_url"]).split(separator: "=").last!)
        let parsed = try UploadToken(verifying: token, secret: secret, scope: .upload)
        #expect(parsed.maxBytes == 1000 && abs(Double(parsed.expires) - Date().timeIntervalSince1970 - 1800) < 60)
        let badID = try Tool.run(Paths.binary, ["upload-url", "--id", "a/b", "--server", "http://x", "--upload-secret-file", secretFile])
        #expect(badID.status == 64 && badID.stderr.contains("--id"), "\(badID.stderr)")
        chmod(secretFile, 0o644)
        let open = try Tool.run(Paths.binary, ["upload-url", "--id", "a", "--server", "http://x", "--upload-secret-file", secretFile])
        #expect(open.status == 78 && open.stderr.contains("chmod 600"), "\(open.stderr)")
    }

    /// `/openapi.yaml` is the checked-in docs/openapi.yaml, valid YAML naming every route.
    @Test func theServedAPIDocumentIsTheCheckedInOne() throws {
        let base = Paths.scratch("serve-openapi")
        let server = try UploadServerProcess(base: base)
        let served = try Tool.run("curl", ["-sf", "\(server.url)/openapi.yaml"])
        let checkedIn = try String(contentsOfFile: "\(Paths.root)/docs/openapi.yaml", encoding: .utf8)
        #expect(served.status == 0 && served.stdout == checkedIn, "docs/openapi.yaml and OpenAPIDocument.swift differ")
        let paths = try Tool.run("python3", ["-c", "import sys, yaml; d = yaml.safe_load(open(sys.argv[1])); print(' '.join(sorted(d['paths'])), d['openapi'])",
                                             "\(Paths.root)/docs/openapi.yaml"])
        #expect(paths.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "/healthz /metrics /openapi.yaml /v1/jobs/{id} /v1/uploads /v1/uploads/{id}/{part} 3.1.0",
                "\(paths.stdout) \(paths.stderr)")
    }
}
