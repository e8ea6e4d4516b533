import Foundation
import Ingest

/// A tus `Upload-Metadata` header: `key base64,key base64`. `filename` is used (as the original's
/// name in the spool, when it is a safe single name), and `playback` (`public` or `signed`); the
/// header is kept for `HEAD`.
struct UploadMetadata {
    var raw: String?
    /// `filename`, when given and safe.
    var fileName: String?
    /// `filename` was given but is not a safe single name.
    var unsafeName = false
    /// `playback`, when given: the phone may ask `signed` (a link signed so cannot be made public).
    var playback: PlaybackPolicy?

    init(header: String?) throws(TusRefusal) {
        guard let header, !header.isEmpty else { return }
        guard header.utf8.count <= 4096 else { throw TusRefusal(.badRequest, "bad_metadata", "Upload-Metadata is longer than 4096 bytes") }
        raw = header
        for pair in header.split(separator: ",") {
            let parts = pair.trimmingCharacters(in: .whitespaces).split(separator: " ", omittingEmptySubsequences: true)
            guard (1...2).contains(parts.count), !parts[0].isEmpty else {
                throw TusRefusal(.badRequest, "bad_metadata", "Upload-Metadata must be 'key base64' pairs separated by commas")
            }
            var value: Data?
            if parts.count == 2 {
                guard let decoded = Data(base64Encoded: String(parts[1])) else {
                    throw TusRefusal(.badRequest, "bad_metadata", "Upload-Metadata value of \(parts[0]) is not base64")
                }
                value = decoded
            }
            if parts[0] == "playback" {
                guard let value, let policy = PlaybackPolicy(rawValue: String(decoding: value, as: UTF8.self)) else {
                    throw TusRefusal(.badRequest, "bad_metadata", "Upload-Metadata playback must be public or signed")
                }
                playback = policy
            }
            if parts[0] == "filename" {
                if let value, let name = String(data: value, encoding: .utf8), Self.isSafeName(name) {
                    fileName = name
                } else {
                    unsafeName = true
                }
            }
        }
    }

    /// One name of 1–128 bytes: no `/`, no control characters, not hidden, not `.` or `..`.
    static func isSafeName(_ name: String) -> Bool {
        (1...128).contains(name.utf8.count) && !name.hasPrefix(".") && !name.unicodeScalars.contains { $0 == "/" || $0.value < 0x20 || $0.value == 0x7F }
    }
}
