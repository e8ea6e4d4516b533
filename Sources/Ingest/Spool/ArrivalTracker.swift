import Foundation
import Transcode

/// Decides when an upload in `incoming/` is complete and may be claimed, from what inotify saw of
/// it (when watching) and how long it has stayed unchanged across full listings of `incoming/`.
///
/// inotify only makes arrivals faster: every entry is found by a listing (on each wake-up and at
/// least every poll interval), and an entry no event announced still completes by settling.
struct ArrivalTracker {
    /// One full listing of `incoming/`.
    struct Scan {
        var arrivals: [Spool.Arrival]
        /// inotify's queue overflowed since the last scan: what it knew was dropped, and the
        /// entries listed now are judged by settling alone.
        var overflowed: Bool
    }

    enum Verdict: Equatable {
        case waiting
        /// `announced` is false when inotify was watching, had applied every event queued, and
        /// said nothing of the entry: only the listing found it (a watcher bug, worth a log line
        /// and a metric). While the watcher is behind (a flood of events, a busy host) the
        /// event may be in its queue still: that is not counted.
        case complete(announced: Bool)
    }

    private let settleSeconds: Double
    private let admission: Admission
    /// What inotify saw of each name in `incoming/` (nil: polling only).
    private let watcher: DirectoryWatcher?
    /// Names whose arrival no watcher could have seen: listed at start-up or right after an overflow.
    private var unwatched: Set<String> = []
    private var scanned = false
    private var overflows = 0
    /// At the last scan the watcher had events it had not applied: a name it has nothing on may
    /// be in them.
    private var behind = false
    private var seen: [String: (size: Int64, files: Int, modified: Date, since: Date)] = [:]

    init(settleSeconds: Double, admission: Admission, watcher: DirectoryWatcher?) {
        self.settleSeconds = settleSeconds
        self.admission = admission
        self.watcher = watcher
    }

    /// Lists `incoming/` in full (`list` is ``Spool/arrivals()``). Names gone since the last scan
    /// are forgotten, except those an event announced while the listing ran (the watcher's mark
    /// is taken before listing).
    mutating func scan(_ list: () -> [Spool.Arrival]) -> Scan {
        let mark = watcher?.mark()
        let arrivals = list()
        let names = Set(arrivals.map(\.name))
        let overflowed = mark.map { $0.overflows > overflows } ?? false
        if !scanned || overflowed { unwatched.formUnion(names) }
        scanned = true
        if let mark {
            overflows = mark.overflows
            behind = mark.behind
            watcher?.keep(only: names, listedAfter: mark)
        }
        unwatched.formIntersection(names)
        seen = seen.filter { names.contains($0.key) }
        return Scan(arrivals: arrivals, overflowed: overflowed)
    }

    /// Complete means renamed in (complete at once), or built in place and then left alone, its
    /// size, entries and mtimes unchanged for `settleSeconds`:
    /// - a directory once it holds `upload.json`; without it, one made in place waits for it,
    ///   and one no event showed arriving (there at start-up, or unannounced) is taken (and
    ///   refused) after ten times the settle time;
    /// - a file unless the last event says it is being written; an empty one only after ten
    ///   times the settle time (a writer may have created it and not written yet).
    ///
    /// An upload already over the size limit is taken at once, so one that keeps growing is
    /// refused instead of watched forever.
    mutating func verdict(_ arrival: Spool.Arrival, now: Date) -> Verdict {
        if !admission.fits(bytes: arrival.size, manifestAllowance: Upload.maxManifestBytes) { return .complete(announced: true) }
        let event = watcher?.state(of: arrival.name)
        if event == .renamedIn { return .complete(announced: true) }
        guard let previous = seen[arrival.name], previous.size == arrival.size, previous.files == arrival.files,
              previous.modified == arrival.modified else {
            seen[arrival.name] = (arrival.size, arrival.files, arrival.modified, now)
            return .waiting
        }
        let quiet = now.timeIntervalSince(previous.since)
        guard quiet >= settleSeconds else { return .waiting }
        let complete: Bool
        if arrival.isDirectory {
            complete = arrival.hasManifest || (event == nil && quiet >= 10 * settleSeconds)
        } else {
            let empty = arrival.size == 0 && !arrival.isSpecial
            complete = event != .beingWritten && (!empty || quiet >= 10 * settleSeconds)
        }
        guard complete else { return .waiting }
        return .complete(announced: watcher == nil || event != nil || behind || unwatched.contains(arrival.name))
    }
}
