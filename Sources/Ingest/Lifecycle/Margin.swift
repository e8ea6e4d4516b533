import Foundation

/// How far a shown, growing video is ahead of its earliest viewer: the seconds every rung lists
/// minus the seconds played since it was shown, at 1× (infinite once every rung has ended).
public struct Margin: Sendable, Equatable {
    /// What a job process reports of its growing ladder (the job process contract's).
    public typealias Listing = JobListing

    public var shownAt: ContinuousClock.Instant
    public var listing: Listing
    /// The pace it lists at, over the time it ran since the show (``record(_:ran:)``).
    public private(set) var pace = ListingPace()

    public init(shownAt: ContinuousClock.Instant, listing: Listing) {
        self.shownAt = shownAt
        self.listing = listing
    }

    public func seconds(at now: ContinuousClock.Instant) -> Double {
        listing.ended ? .infinity : listing.seconds - (now - shownAt).seconds
    }

    /// The job lists `listing` after running `ran` seconds since the show (the worker's own stops
    /// of it left out).
    public mutating func record(_ listing: Listing, ran: Double) {
        self.listing = listing
        pace.record(listed: listing.seconds, ran: ran)
    }

    /// The margin its viewer is left with when the last second is listed, if the video goes on at
    /// the pace it ran at lately: the margin now, less what a pace under 1× loses over the
    /// seconds still to list (`remaining · (1/pace − 1)`). A video near its end can go slowly;
    /// one with much left and a slow pace runs dry later even with a margin now. The margin
    /// itself while the pace or the length is not known yet, or at 1× and over.
    public func projected(at now: ContinuousClock.Instant) -> Double {
        let margin = seconds(at: now)
        guard margin.isFinite, let total = listing.totalSeconds, let pace = pace.perSecond, pace < 1 else { return margin }
        let remaining = max(0, total - listing.seconds)
        guard remaining > 0 else { return margin }
        return pace > 0 ? margin - remaining * (1 / pace - 1) : -.infinity
    }

    /// The same rule over wall-clock instants, for readers in another process (the console).
    public static func seconds(listed: Double, ended: Bool, shownAt: Date, now: Date = Date()) -> Double? {
        ended ? nil : listed - now.timeIntervalSince(shownAt)
    }
}

/// Seconds listed per second run, over the last ``window`` seconds a shown video ran.
public struct ListingPace: Sendable, Equatable {
    private var samples: [Sample] = []
    private struct Sample: Sendable, Equatable {
        var ran: Double
        var listed: Double
    }

    /// How far back the pace is taken: a few segments even at a slow pace.
    public static let window = 6.0
    /// How long it must have run before it has a pace.
    public static let minimumSpan = 2.0

    public init() {}

    /// It lists `listed` seconds after running `ran`.
    public mutating func record(listed: Double, ran: Double) {
        samples.append(Sample(ran: ran, listed: listed))
        if let base = samples.lastIndex(where: { $0.ran <= ran - Self.window }), base > 0 { samples.removeFirst(base) }
    }

    /// The pace over the window (nil until it ran ``minimumSpan`` seconds).
    public var perSecond: Double? {
        guard let first = samples.first, let last = samples.last, last.ran - first.ran >= Self.minimumSpan else { return nil }
        return max(0, last.listed - first.listed) / (last.ran - first.ran)
    }
}
