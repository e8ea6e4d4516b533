import Foundation

/// The span a console chart covers, and the width of each of its bars.
public enum ActivityWindow: String, Sendable, CaseIterable {
    /// The last hour, minute by minute.
    case hour
    /// The last day, in quarters of an hour.
    case day

    /// Seconds per bucket.
    public var step: Int { self == .hour ? 60 : 900 }
    public var buckets: Int { self == .hour ? 60 : 96 }

    /// Where the window starts so that its last bucket is the one `now` falls in (buckets are
    /// aligned to whole minutes or quarters of an hour since the epoch, as `date_bin` aligns them).
    public func start(now: Date) -> Date {
        let current = (Int(now.timeIntervalSince1970) / step) * step
        return Date(timeIntervalSince1970: TimeInterval(current - (buckets - 1) * step))
    }
}

/// What a store's jobs did in one bucket of a window, for every host (`host` nil) or one, or
/// over the whole window (`bucket` nil): ``JobBrowser/activity(since:step:)``'s rows.
public struct ActivityTally: Codable, Sendable, Equatable {
    /// The bucket's index from the window's start; nil: the whole window.
    public var bucket: Int?
    /// The worker host whose attempts these are; nil: every host (and the queue's own counts).
    public var host: String?
    /// Attempts that ended published, rejected, failed (the `/metrics` `ingestd_jobs_total` labels).
    public var published = 0
    public var rejected = 0
    public var failed = 0
    /// Jobs that entered the queue (new, retried, released) and that left it (claimed by an
    /// attempt, or handed on to the fleet's queue).
    public var entered = 0
    public var claimed = 0
    /// Seconds from upload to playable: the median and the 95th percentile (nearest rank).
    public var playableP50: Double?
    public var playableP95: Double?
    /// How many videos became playable (the percentiles' sample size).
    public var playable = 0

    public init(bucket: Int?, host: String?) {
        self.bucket = bucket
        self.host = host
    }
}

extension JobBrowser {
    /// The last hour's figures for every host, as the console's hour window totals them
    /// (`status --json`'s `lastHour`).
    public func lastHour(now: Date = Date()) async throws -> ActivityTally {
        let tallies = try await activity(since: ActivityWindow.hour.start(now: now), step: ActivityWindow.hour.step)
        return tallies.first { $0.bucket == nil && $0.host == nil } ?? ActivityTally(bucket: nil, host: nil)
    }
}

/// One event that counts in a chart (the spool's log lines, read by ``ActivityTally/tally(_:since:step:)``).
public struct ActivityEvent: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        case entered, claimed, published, rejected, failed
        case playable(after: Double)
    }

    public var at: Date
    public var kind: Kind
    public var host: String?

    public init(at: Date, kind: Kind, host: String?) {
        self.at = at
        self.kind = kind
        self.host = host
    }
}

extension ActivityTally {
    /// The nearest-rank percentile `p` of `values` (PostgreSQL's `percentile_disc`).
    public static func percentile(_ p: Double, of values: [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        return sorted[max(0, Int((p * Double(sorted.count)).rounded(.up)) - 1)]
    }

    /// `events` binned into `step`-second buckets from `since`: per bucket and per window, for
    /// every host and for each.
    public static func tally(_ events: [ActivityEvent], since: Date, step: Int) -> [ActivityTally] {
        struct Key: Hashable { var bucket: Int?; var host: String? }
        var tallies: [Key: ActivityTally] = [:]
        var times: [Key: [Double]] = [:]
        for event in events where event.at >= since {
            let bucket = Int(event.at.timeIntervalSince(since)) / step
            let keys = [Key(bucket: bucket, host: nil), Key(bucket: nil, host: nil)]
                + (event.host.map { [Key(bucket: bucket, host: $0), Key(bucket: nil, host: $0)] } ?? [])
            for key in keys {
                var tally = tallies[key] ?? ActivityTally(bucket: key.bucket, host: key.host)
                switch event.kind {
                case .entered: tally.entered += 1
                case .claimed: tally.claimed += 1
                case .published: tally.published += 1
                case .rejected: tally.rejected += 1
                case .failed: tally.failed += 1
                case .playable(let after):
                    tally.playable += 1
                    times[key, default: []].append(after)
                }
                tallies[key] = tally
            }
        }
        for (key, values) in times {
            tallies[key]?.playableP50 = percentile(0.5, of: values)
            tallies[key]?.playableP95 = percentile(0.95, of: values)
        }
        return tallies.values.sorted { ($0.bucket ?? -1, $0.host ?? "") < ($1.bucket ?? -1, $1.host ?? "") }
    }
}

/// A window of a store's activity as the console charts it: per bucket published, rejected
/// and failed attempts, time to playable (p50, p95) and the queue's depth; the same per host.
public struct JobActivity: Sendable, Equatable {
    public var window: ActivityWindow
    public var start: Date
    /// Every host's, one per bucket, oldest first.
    public var buckets: [Bucket]
    /// The whole window's figures.
    public var total: ActivityTally
    /// Each host's buckets and total, by name.
    public var hosts: [Host]

    public struct Bucket: Sendable, Equatable {
        public var start: Date
        public var tally: ActivityTally
        /// Jobs waiting at the bucket's end (nil for a host's buckets).
        public var depth: Int?
    }

    public struct Host: Sendable, Equatable {
        public var name: String
        public var buckets: [Bucket]
        public var total: ActivityTally
    }

    /// The window from a store's tallies. The queue's depth is known now (`queuedNow`); each
    /// bucket's end is walked back from it through what entered and left the queue after it.
    public init(window: ActivityWindow, now: Date, tallies: [ActivityTally], queuedNow: Int) {
        self.window = window
        start = window.start(now: now)
        let step = window.step, count = window.buckets, start = start
        func buckets(_ host: String?) -> [Bucket] {
            let byIndex = Dictionary(tallies.filter { $0.host == host && $0.bucket != nil }.map { ($0.bucket!, $0) }) { a, _ in a }
            return (0..<count).map { index in
                Bucket(start: start.addingTimeInterval(TimeInterval(index * step)),
                       tally: byIndex[index] ?? ActivityTally(bucket: index, host: host), depth: nil)
            }
        }
        var all = buckets(nil)
        var depth = queuedNow
        for index in all.indices.reversed() {
            all[index].depth = max(0, depth)
            depth += all[index].tally.claimed - all[index].tally.entered
        }
        self.buckets = all
        total = tallies.first { $0.bucket == nil && $0.host == nil } ?? ActivityTally(bucket: nil, host: nil)
        let names = Set(tallies.compactMap(\.host)).sorted()
        hosts = names.map { name in
            Host(name: name, buckets: buckets(name),
                 total: tallies.first { $0.bucket == nil && $0.host == name } ?? ActivityTally(bucket: nil, host: name))
        }
    }
}
