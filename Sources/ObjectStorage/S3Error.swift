import Foundation

/// A request S3 refused or never answered, naming the object and what the server said.
public struct S3Error: Error, CustomStringConvertible, Sendable {
    public var method: String
    public var location: S3Location
    /// The HTTP status; nil when no response came (connection refused, timeout).
    public var status: Int?
    /// S3's error code (`AccessDenied`, `NoSuchKey`, `PreconditionFailed`, …).
    public var code: String?
    public var message: String

    public init(method: String, location: S3Location, status: Int?, code: String?, message: String) {
        self.method = method
        self.location = location
        self.status = status
        self.code = code
        self.message = message
    }

    public var description: String {
        let what = [status.map(String.init), code].compactMap { $0 }.joined(separator: " ")
        let hint = isOutOfSpace ? " (the store has no room: free space or raise the quota)"
            : status == 403 ? " (are the credentials right, and does the bucket's policy allow this?)" : ""
        return "\(location): \(method) \(what.isEmpty ? "failed" : what): \(message)\(hint)"
    }

    /// Worth trying again: no answer, a 5xx, `429` or S3's `SlowDown`/`RequestTimeout`.
    public var isTransient: Bool {
        guard let status else { return true }
        return status >= 500 || status == 429 || status == 408 || code == "SlowDown" || code == "RequestTimeout"
    }

    public var isNotFound: Bool { status == 404 }
    /// The store has no room: `507 Insufficient Storage`, MinIO's `XMinioStorageFull` and
    /// bucket quota, Ceph's `QuotaExceeded`. A fault of the storage, never of the upload (unlike
    /// `EntityTooLarge`, the object's own size).
    public var isOutOfSpace: Bool {
        status == 507 || ["XMinioStorageFull", "XMinioAdminBucketQuotaExceeded", "QuotaExceeded"].contains(code ?? "")
    }
    /// A conditional write lost (`If-None-Match: *` on an existing key, `If-Match` on a changed one).
    public var isPreconditionFailed: Bool { status == 412 || code == "PreconditionFailed" || status == 409 && code == "ConditionalRequestConflict" }
}
