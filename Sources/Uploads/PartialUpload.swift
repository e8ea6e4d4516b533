import Foundation
import Ingest

/// One tus upload as `ingestd serve` keeps it, `uploading/<id>/files/<part>/state.json`: how
/// long it is and how many bytes are durably on disk.
struct PartialUpload: Codable, Sendable {
    var id: String
    /// 1…`files` of the token, in creation order.
    var part: Int
    var length: Int64
    /// Bytes fsynced and acknowledged; the data file is cut back to this before every write.
    var offset: Int64
    /// The file's name in the job's upload (the original's name, or the name `upload.json` gives it).
    var name: String
    /// Where its bytes are, relative to the set's `job/`: `upload/<name>` for a lone video file,
    /// `upload/<id>/<name>` in an upload set.
    var path: String
    /// The client's `Upload-Metadata`, echoed on `HEAD`.
    var metadata: String?
    /// The last `PATCH` ended before its body did: the next one at this offset is a resume.
    var interrupted: Bool = false

    var isComplete: Bool { offset == length }
}

/// The uploads one token allows, `uploading/<id>/set.json`: written with the first creation.
struct UploadSet: Codable, Sendable {
    var id: String
    var files: Int
    /// Seconds since 1970: the token's expiry; the set is removed after it.
    var expires: Int64
    /// Ended by the client (`DELETE` of any of its uploads): the bytes are gone, the record stays
    /// until expiry so that the token cannot start again.
    var terminated = false
    /// What the link and the phone asked (``PlaybackPolicy/strictest(_:)`` of both); nil: nothing.
    var playback: PlaybackPolicy?

    var expiresAt: Date { Date(timeIntervalSince1970: TimeInterval(expires)) }
}
