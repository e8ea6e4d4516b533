import Foundation

/// How a job's attempt ended: the one vocabulary of events, webhooks, `status --json`, metrics
/// labels (``label``) and exit codes.
public enum JobEnd: Sendable, Equatable {
    /// Its output is in place as `CDN/<id>/`.
    case published(JobResult)
    /// The upload itself is bad: never retried.
    case rejected(Reason)
    /// Retries ran out (or the failure cannot be retried).
    case failed(Reason)
    /// This attempt failed; the job is queued again after `after`.
    case retried(Reason, after: Duration)
    /// Given back without charging an attempt (drain, host not ready).
    case released

    /// Every ``label``, for metrics that list each result from the start.
    public static let labels = ["published", "rejected", "failed", "retried", "released", "lease_lost"]

    /// `published`, `rejected`, `failed`, `retried` or `released` (`lease_lost` is the metrics
    /// label of an attempt whose end could not be recorded).
    public var label: String {
        switch self {
        case .published: "published"
        case .rejected: "rejected"
        case .failed: "failed"
        case .retried: "retried"
        case .released: "released"
        }
    }

    public var reason: Reason? {
        switch self {
        case .rejected(let reason), .failed(let reason), .retried(let reason, _): reason
        case .published, .released: nil
        }
    }
}

/// When a failed attempt is tried again: up to `maxAttempts` attempts, the n-th retry after
/// `backoff` × 2^(n-1), at most `maxDelay`.
public struct RetryPolicy: Sendable, Equatable {
    public var maxAttempts: Int
    public var backoff: Duration
    public var maxDelay: Duration

    public init(maxAttempts: Int, backoff: Duration, maxDelay: Duration = .seconds(300)) {
        self.maxAttempts = maxAttempts
        self.backoff = backoff
        self.maxDelay = maxDelay
    }

    /// The end of attempt `attempt` (1-based) that failed for `reason`.
    public func end(attempt: Int, _ reason: Reason) -> JobEnd {
        guard attempt < maxAttempts else { return .failed(reason) }
        return .retried(reason, after: min(maxDelay, backoff * (1 << min(20, max(0, attempt - 1)))))
    }
}
