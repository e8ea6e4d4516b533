import Foundation

/// Why an upload ended in `rejected/` or `failed/`, written as `reason.json` beside the original.
public struct Reason: Codable, Sendable, Equatable {
    /// Machine code: `too_large`, `too_long`, `no_video_stream`, `corrupt_input`, `crashed`, `timeout`…
    public var code: String
    /// What happened, with the file, the measured value and the limit where there is one.
    public var message: String
    public var attempts: Int
    public var at: Date

    public init(code: String, message: String, attempts: Int, at: Date = Date()) {
        self.code = code
        self.message = message
        self.attempts = attempts
        self.at = at
    }
}
