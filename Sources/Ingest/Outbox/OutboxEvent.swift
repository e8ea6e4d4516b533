import Foundation

/// One event for the app's backend, as kept in the ``Outbox`` until it is delivered.
///
/// `body` is the exact JSON sent (and signed) on every attempt: `{"type", "timestamp", "data"}`.
public struct OutboxEvent: Codable, Sendable, Equatable {
    /// The `webhook-id`: the same on every attempt, so receivers can drop repeats.
    public var id: String
    /// `upload.published`, `upload.rejected` or `upload.failed`.
    public var type: String
    public var createdAt: Date
    public var body: String
    /// Delivery attempts made so far.
    public var attempts: Int = 0
    /// Earliest time of the next attempt.
    public var nextAttemptAt: Date
    /// Why the last attempt failed (`HTTP 503`, `timed out after 15 s`, `connection refused`…).
    public var lastError: String?
    public var deliveredAt: Date?

    /// An event as a store kept it.
    public init(id: String, type: String, createdAt: Date, body: String, attempts: Int, nextAttemptAt: Date, lastError: String?) {
        self.id = id
        self.type = type
        self.createdAt = createdAt
        self.body = body
        self.attempts = attempts
        self.nextAttemptAt = nextAttemptAt
        self.lastError = lastError
    }

    /// The job the event is about (its body's `data.id`).
    public var job: String? {
        let object = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]
        return (object?["data"] as? [String: Any])?["id"] as? String
    }

    /// The event for `job` (deterministic id: a crash that repeats the recording repeats
    /// nothing); `attempt`: an event each attempt has once (`upload.playable`: a retry plays
    /// from a version of its own, which the app hears of too).
    public init(type: String, job: String, attempt: String? = nil, data: [String: any Sendable], at now: Date = Date()) {
        id = "msg_\(job)_\(type.split(separator: ".").last ?? "")" + (attempt.map { "_\($0)" } ?? "")
        self.type = type
        createdAt = now
        nextAttemptAt = now
        let object: [String: Any] = ["type": type, "timestamp": ISO8601DateFormatter().string(from: now), "data": data]
        let json = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
        body = String(decoding: json, as: UTF8.self)
    }
}
