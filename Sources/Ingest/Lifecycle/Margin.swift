import Foundation

/// How far a shown, growing video is ahead of its earliest viewer: the seconds every rung lists
/// minus the seconds played since it was shown, at 1× (infinite once every rung has ended).
public struct Margin: Sendable, Equatable {
    /// What a job process reports of its growing ladder.
    public struct Listing: Codable, Sendable, Equatable {
        public var seconds: Double
        public var ended: Bool

        public init(seconds: Double, ended: Bool) {
            self.seconds = seconds
            self.ended = ended
        }
    }

    public var shownAt: ContinuousClock.Instant
    public var listing: Listing

    public init(shownAt: ContinuousClock.Instant, listing: Listing) {
        self.shownAt = shownAt
        self.listing = listing
    }

    public func seconds(at now: ContinuousClock.Instant) -> Double {
        listing.ended ? .infinity : listing.seconds - (now - shownAt).seconds
    }

    /// The same rule over wall-clock instants, for readers in another process (the console).
    public static func seconds(listed: Double, ended: Bool, shownAt: Date, now: Date = Date()) -> Double? {
        ended ? nil : listed - now.timeIntervalSince(shownAt)
    }
}
