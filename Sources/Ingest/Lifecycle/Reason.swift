import Foundation

/// Why a job ended rejected or failed (or why its last attempt failed): the one reason type of
/// the spool's `reason.json`, the queue's `reason` column, events, webhooks, `status --json` and
/// the status API.
public struct Reason: Codable, Sendable, Equatable {
    /// Machine code: `too_large`, `too_long`, `no_video_stream`, `corrupt_input`, `crashed`, `timeout`…
    public var code: String
    /// What happened, with the file, the measured value and the limit where there is one.
    public var message: String
    /// Attempts made when it was written.
    public var attempts: Int
    /// When it was written; nil where the store keeps no time with it (the queue's row has its own).
    public var at: Date?

    public init(code: String, message: String, attempts: Int, at: Date? = Date()) {
        self.code = code
        self.message = message
        self.attempts = attempts
        self.at = at
    }

    enum CodingKeys: String, CodingKey {
        case code, message, attempts, at
    }

    /// Reads any of the stores' shapes: `attempts` and `at` may be absent.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        code = try container.decode(String.self, forKey: .code)
        message = try container.decode(String.self, forKey: .message)
        attempts = try container.decodeIfPresent(Int.self, forKey: .attempts) ?? 0
        if let text = try? container.decodeIfPresent(String.self, forKey: .at) {
            at = ISO8601DateFormatter().date(from: text)
        } else {
            at = try container.decodeIfPresent(Date.self, forKey: .at)
        }
    }

    /// `at` in ISO 8601 whatever the encoder's date strategy (the status API's and the files' alike).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(code, forKey: .code)
        try container.encode(message, forKey: .message)
        try container.encode(attempts, forKey: .attempts)
        try container.encodeIfPresent(at.map { ISO8601DateFormatter().string(from: $0) }, forKey: .at)
    }
}
