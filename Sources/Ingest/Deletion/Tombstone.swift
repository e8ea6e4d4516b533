import Foundation

/// What stays of a deleted video: its id, when, why and who, and what a CDN must purge. Recorded
/// before anything is removed (the deletion's first step), completed once nothing of the video
/// is left; `status --job ID` reads it back as `"state": "deleted"`.
public struct Tombstone: Codable, Sendable, Equatable {
    public var id: String
    public var reason: DeletionReason
    public var at: Date
    /// Every path removed from the CDN, relative to its root (`<id>/master.m3u8`…): what the
    /// `upload.deleted` webhook names for a CDN to purge. Recorded before they are removed.
    public var purge: [String]
    /// When nothing of the video was left; nil while the deletion is under way.
    public var completedAt: Date?
    /// An erasure that could not remove everything (a versioned bucket keeps old bytes): why.
    public var erasureIncomplete: String?

    public init(id: String, reason: DeletionReason, at: Date, purge: [String] = [], completedAt: Date? = nil,
                erasureIncomplete: String? = nil) {
        self.id = id
        self.reason = reason
        self.at = at
        self.purge = purge
        self.completedAt = completedAt
        self.erasureIncomplete = erasureIncomplete
    }

    /// The prefix a CDN purges by: everything of the video lies under it.
    public var purgePrefix: String { "\(id)/" }

    /// The `upload.deleted` webhook: the id, the reason, when, and what to purge.
    public var webhook: OutboxEvent {
        var data: [String: any Sendable] = [
            "id": id, "code": reason.code.rawValue, "reason": reason.text,
            "deletedAt": ISO8601DateFormatter().string(from: at),
            "purge": ["prefixes": [purgePrefix], "paths": purge],
        ]
        if let erasureIncomplete { data["erasureIncomplete"] = erasureIncomplete }
        return OutboxEvent(type: "upload.deleted", job: id, data: data, at: completedAt ?? Date())
    }
}
