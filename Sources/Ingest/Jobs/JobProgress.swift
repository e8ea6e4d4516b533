import Foundation

/// Progress of a job in flight, in `work/<id>/progress.json` (read by `ingestd status`).
public struct JobProgress: Codable, Sendable {
    public var fraction: Double
    public var outputSeconds: Double
    public var speed: Double
    public var etaSeconds: Double?
    public var updatedAt: Date

    public init(fraction: Double, outputSeconds: Double, speed: Double, etaSeconds: Double?, updatedAt: Date) {
        self.fraction = fraction
        self.outputSeconds = outputSeconds
        self.speed = speed
        self.etaSeconds = etaSeconds
        self.updatedAt = updatedAt
    }
}
