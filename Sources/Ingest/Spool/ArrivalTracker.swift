import Foundation
import Transcode

/// Decides when an upload in `incoming/` is complete and may be claimed, from what inotify saw of
/// it (when watching) and how long it has stayed unchanged.
struct ArrivalTracker {
    private let settleSeconds: Double
    private let admission: Admission
    /// What inotify saw of each name in `incoming/` (nil: polling only).
    private let watcher: DirectoryWatcher?
    /// Names present at start-up, whose writing we could not have seen.
    private var presentAtStart: Set<String>?
    private var seen: [String: (size: Int64, files: Int, modified: Date, since: Date)] = [:]

    init(settleSeconds: Double, admission: Admission, watcher: DirectoryWatcher?) {
        self.settleSeconds = settleSeconds
        self.admission = admission
        self.watcher = watcher
    }

    /// Takes the current listing of `incoming/`: the first one is what was there at start-up;
    /// names gone since are forgotten.
    mutating func observe(_ names: Set<String>) {
        if presentAtStart == nil { presentAtStart = names }
        seen = seen.filter { names.contains($0.key) }
        watcher?.keep(only: names)
    }

    /// Complete means renamed in (complete at once), or built in place and then left alone:
    /// a directory once it holds `upload.json` and its whole tree (sizes, entries, mtimes) has
    /// not changed for `settleSeconds` (one found at start-up without `upload.json`: after ten
    /// times that); a file once closed after writing and then unchanged for
    /// `settleSeconds` (settling alone decides when inotify is off or the file was there before
    /// the daemon started). An upload already over the size limit is taken at once, so one that
    /// keeps growing is refused instead of watched forever.
    mutating func isComplete(_ arrival: Spool.Arrival, now: Date) -> Bool {
        if !admission.fits(bytes: arrival.size, manifestAllowance: Upload.maxManifestBytes) { return true }
        let event = watcher?.state(of: arrival.name)
        if event == .renamedIn { return true }
        guard let previous = seen[arrival.name], previous.size == arrival.size, previous.files == arrival.files,
              previous.modified == arrival.modified else {
            seen[arrival.name] = (arrival.size, arrival.files, arrival.modified, now)
            return false
        }
        guard now.timeIntervalSince(previous.since) >= settleSeconds else { return false }
        if arrival.isDirectory {
            // One that was already there at start-up may have been renamed in while no one
            // watched: without upload.json it is taken (and refused) only after a long quiet spell.
            let quiet = now.timeIntervalSince(previous.since) >= 10 * settleSeconds
            return arrival.hasManifest || (presentAtStart?.contains(arrival.name) == true && quiet)
        }
        if arrival.isSpecial || watcher == nil || presentAtStart?.contains(arrival.name) == true { return event != .beingWritten }
        return event == .closedAfterWriting
    }
}
