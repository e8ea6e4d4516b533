import Foundation

/// One tus upload as `ingestd serve` keeps it, `<spool>/uploading/<id>/state.json`: how long it
/// is, how many bytes are durably on disk, and whether it has become a job.
struct PartialUpload: Codable, Sendable {
    enum State: String, Codable, Sendable {
        /// Bytes are still to come.
        case receiving
        /// The last byte landed and the upload is a job in the spool (this record stays until the
        /// token expires, so the token cannot start a second upload).
        case completed
        /// Ended by the client (`DELETE`): the bytes are gone, the record stays like a completed one.
        case terminated
    }

    var id: String
    var length: Int64
    /// Bytes fsynced and acknowledged; the data file is cut back to this before every write.
    var offset: Int64
    /// The file's name inside the job's `upload/` directory.
    var name: String
    /// The client's `Upload-Metadata`, echoed on `HEAD`.
    var metadata: String?
    /// Seconds since 1970: the upload's token expiry; the upload is removed after it.
    var expires: Int64
    var state: State
    /// The last `PATCH` ended before its body did: the next one at this offset is a resume.
    var interrupted: Bool = false

    var expiresAt: Date { Date(timeIntervalSince1970: TimeInterval(expires)) }
}
