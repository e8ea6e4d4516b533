import Foundation
import Ingest
import Transcode

/// The URLs the app's backend gives a phone for one upload (`ingestd upload-url`): the tus
/// creation URL a stock tus client POSTs to, and the job's status URL.
public struct UploadLink: Sendable, Codable, Equatable {
    public var uploadURL: String
    public var statusURL: String
    public var expiresAt: Date

    enum CodingKeys: String, CodingKey {
        case uploadURL = "upload_url", statusURL = "status_url", expiresAt = "expires_at"
    }

    /// How much longer than the upload the status URL stays valid: the app polls it while the
    /// job waits and runs.
    public static let statusLifetime: TimeInterval = 7 * 24 * 3600

    /// Signs the links for job `id` on `server` (`https://uploads.example.com`, no trailing path):
    /// one video file, or with `files` > 1 an upload set (`upload.json`, its clips and sound track,
    /// each a tus upload to the same URL; the job starts when all are complete).
    /// `limits`: the preset's, as `serve` holds uploads to them (the ceiling of `maxBytes`, which
    /// defaults to it, and of `files`).
    public init(id: String, server: String, secret: [UInt8], limits: Preset.Limits = Preset.builtIn.limits, maxBytes: Int64? = nil,
                files: Int = 1, expiresIn: TimeInterval = 24 * 3600, playback: PlaybackPolicy? = nil, now: Date = Date()) throws(UploadLinkError) {
        let maxBytes = maxBytes ?? limits.maxBytes
        let maxFiles = Admission(limits: limits).maxUploadFiles
        guard UploadToken.isValidID(id) else { throw .badID(id) }
        guard (1...limits.maxBytes).contains(maxBytes) else { throw .badLimit(maxBytes, ceiling: limits.maxBytes) }
        guard (1...maxFiles).contains(files) else { throw .badFiles(files, ceiling: maxFiles) }
        guard expiresIn > 0, expiresIn <= 7 * 24 * 3600 else { throw .badExpiry(expiresIn) }
        let base = try Self.base(server)
        let expires = Int64(now.timeIntervalSince1970 + expiresIn)
        let upload = UploadToken(scope: .upload, id: id, maxBytes: maxBytes, files: files, expires: expires, playback: playback)
            .encoded(secret: secret)
        let status = UploadToken(scope: .status, id: id, maxBytes: maxBytes, files: files, expires: expires + Int64(Self.statusLifetime))
            .encoded(secret: secret)
        uploadURL = "\(base)/v1/uploads?token=\(upload)"
        statusURL = "\(base)/v1/jobs/\(id)?token=\(status)"
        expiresAt = Date(timeIntervalSince1970: TimeInterval(expires))
    }

    /// `server` without its trailing slashes, checked: an http(s) URL with a host and no query.
    static func base(_ server: String) throws(UploadLinkError) -> String {
        var base = server
        while base.hasSuffix("/") { base.removeLast() }
        guard let url = URL(string: base), let scheme = url.scheme, ["http", "https"].contains(scheme), url.host != nil,
              url.query == nil else { throw .badServer(server) }
        return base
    }
}

/// The URL the app's backend sends `DELETE` to, to take one video down (`upload-url --delete`).
public struct DeletionLink: Sendable, Codable, Equatable {
    public var deleteURL: String
    public var expiresAt: Date

    enum CodingKeys: String, CodingKey {
        case deleteURL = "delete_url", expiresAt = "expires_at"
    }

    /// Signs the deletion of job `id` on `server`, valid `expiresIn` seconds (at most 7 days).
    public init(id: String, server: String, secret: [UInt8], expiresIn: TimeInterval = 3600, now: Date = Date()) throws(UploadLinkError) {
        guard UploadToken.isValidID(id) else { throw .badID(id) }
        guard expiresIn > 0, expiresIn <= 7 * 24 * 3600 else { throw .badExpiry(expiresIn) }
        let base = try UploadLink.base(server)
        let expires = Int64(now.timeIntervalSince1970 + expiresIn)
        let token = UploadToken(scope: .delete, id: id, maxBytes: 1, expires: expires).encoded(secret: secret)
        deleteURL = "\(base)/v1/jobs/\(id)?token=\(token)"
        expiresAt = Date(timeIntervalSince1970: TimeInterval(expires))
    }
}

public enum UploadLinkError: Error, CustomStringConvertible {
    case badID(String), badLimit(Int64, ceiling: Int64), badFiles(Int, ceiling: Int), badExpiry(TimeInterval), badServer(String)
    public var description: String {
        switch self {
        case .badID(let id): "--id \(id): 1 to 64 of A-Z a-z 0-9 _ -, not starting with -"
        case .badLimit(let n, let ceiling): "--max-bytes \(n): 1 to \(ceiling) (the preset's upload limit)"
        case .badFiles(let n, let ceiling):
            "--files \(n): 1 (a video file), or 2 to \(ceiling) (upload.json and the clips and sound track it names, as the preset allows)"
        case .badExpiry(let s): "--expires \(Int(s)) s: more than 0 and at most 7 days"
        case .badServer(let s): "--server \(s): an http(s) URL with a host and no query, such as https://uploads.example.com"
        }
    }
}
