import Foundation
import Transcode

/// The console's reads over the spool: each job is a folder, its change time the folder's
/// `ctime` (set by every rename and every write inside it), its history the lines of
/// `events.ndjson` (and the rotated `.1`) that name it. Scans stop at ``scanCap`` folders.
extension SpoolStore: JobBrowser {
    /// The most job folders one read looks at.
    public static let scanCap = 20_000

    public func jobs(_ query: JobQuery) async throws -> JobPage {
        if query.state == .deleted { return try await deletedJobs(query) }
        var rows: [JobRow] = []
        for entry in entries(query.state).prefix(Self.scanCap) {
            if let after = query.after, !(entry.cursor < after) { continue }
            let row = row(entry)
            guard query.state.map({ row.state == $0 }) ?? true, query.matches(row) else { continue }
            if rows.count == query.limit { return JobPage(rows: rows, next: rows.last.map(JobCursor.init)) }
            rows.append(row)
        }
        return JobPage(rows: rows, next: nil)
    }

    public func latest(perState limit: Int) async throws -> [JobRow] {
        var rows: [JobRow] = [], counts: [JobSnapshot.State: Int] = [:]
        for entry in entries(nil).prefix(Self.scanCap) {
            let row = row(entry)
            guard counts[row.state, default: 0] < limit else { continue }
            counts[row.state, default: 0] += 1
            rows.append(row)
        }
        return rows + (try await deletedJobs(JobQuery(state: .deleted, limit: limit))).rows
    }

    public func overview(cap: Int) async throws -> JobOverview {
        let dayAgo = Date().addingTimeInterval(-86_400), hourAgo = Date().addingTimeInterval(-3_600)
        var groups: [String: JobOverview.FailureGroup] = [:]
        for entry in entries(nil).prefix(Self.scanCap) where [.rejected, .failed].contains(entry.folder) && entry.changed >= dayAgo {
            let state: JobSnapshot.State = entry.folder == .failed ? .failed : .rejected
            let code = JSONFile.read(Reason.self, from: "\(layout.job(entry.id, in: entry.folder))/reason.json")?.code ?? "unknown"
            groups["\(state.rawValue) \(code)", default: .init(state: state, code: code, lastHour: 0, lastDay: 0)].lastDay += 1
            if entry.changed >= hourAgo { groups["\(state.rawValue) \(code)"]!.lastHour += 1 }
        }
        let leases = entries(.running).compactMap { entry -> JobOverview.Lease? in
            let record = JSONFile.read(JobRecord.self, from: "\(layout.job(entry.id))/job.json")
            guard Self.isRunning(layout.job(entry.id), record) else { return nil }
            return .init(id: entry.id, holder: HostName.current, token: record?.token ?? 0, expiresAt: nil)
        }
        return JobOverview(states: Self.status(of: layout), cap: cap,
                           failures: groups.values.sorted { ($0.lastDay, $1.code) > ($1.lastDay, $0.code) }, leases: leases)
    }

    /// The `deleted` list: the tombstones, latest first, their code and who asked as a row says them.
    private func deletedJobs(_ query: JobQuery) async throws -> JobPage {
        var rows: [JobRow] = []
        for tombstone in try await tombstones(limit: Self.scanCap) {
            let changed = tombstone.completedAt ?? tombstone.at
            let row = JobRow(id: tombstone.id, state: .deleted, input: tombstone.reason.by, attempts: 0, code: tombstone.reason.code.rawValue,
                             createdAt: tombstone.at, updatedAt: changed, micros: Int64((changed.timeIntervalSince1970 * 1_000_000).rounded()))
            if let after = query.after, !(row.cursor < after) { continue }
            guard query.matches(row) else { continue }
            if rows.count == query.limit { return JobPage(rows: rows, next: rows.last.map(JobCursor.init)) }
            rows.append(row)
        }
        return JobPage(rows: rows, next: nil)
    }

    public func changes(_ wake: @escaping @Sendable () -> Void) async {}

    public func history(_ id: String, limit: Int) async throws -> [JobHistoryEvent] {
        guard UploadManifest.isValidID(id) else { return [] }
        let needle = "\"id\":\"\(id)\""
        var events: [JobHistoryEvent] = []
        for path in [layout.events + ".1", layout.events] {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { continue }
            for line in text.split(separator: "\n") where line.contains(needle) {
                guard var object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                      let time = (object.removeValue(forKey: "time") as? String).flatMap(IngestdDate.date(from:)),
                      let event = object.removeValue(forKey: "event") as? String else { continue }
                object.removeValue(forKey: "id")
                let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
                events.append(JobHistoryEvent(at: time, event: event, data: String(decoding: data, as: UTF8.self)))
            }
        }
        return Array(events.suffix(limit))
    }

    /// A job folder: where it is, and when it last changed.
    struct Entry {
        var id: String
        var folder: SpoolLayout.State
        var changed: Date
        var cursor: JobCursor { JobCursor(micros: Int64((changed.timeIntervalSince1970 * 1_000_000).rounded()), id: id) }
    }

    /// The folders that may hold jobs in `state` (all when nil), latest change first.
    func entries(_ state: JobSnapshot.State?) -> [Entry] {
        let folders: [SpoolLayout.State] = switch state {
        case nil: [.work, .queued, .archive, .rejected, .failed]
        case .queued?: [.work, .queued]
        case .running?: [.work]
        case .published?: [.archive]
        case .rejected?: [.rejected]
        case .failed?: [.failed]
        case .deleted?: []  // tombstones are not job folders: `status --job` reads them
        }
        var entries: [Entry] = []
        for folder in folders {
            for id in Self.visibleEntries(layout.directory(folder)).prefix(Self.scanCap) where UploadManifest.isValidID(id) {
                var info = stat()
                guard lstat(layout.job(id, in: folder), &info) == 0 else { continue }
                let changed = Date(timeIntervalSince1970: Double(info.st_ctim.tv_sec) + Double(info.st_ctim.tv_nsec / 1000) / 1e6)
                entries.append(Entry(id: id, folder: folder, changed: changed))
            }
        }
        return entries.sorted { $0.cursor > $1.cursor }
    }

    /// The folder's job as a list row: what ``SpoolStore/job(_:in:layout:record:)`` says of
    /// it (no manifest read), with its original's name and the folder's times.
    func row(_ entry: Entry) -> JobRow {
        let record = JSONFile.read(JobRecord.self, from: "\(layout.job(entry.id, in: entry.folder))/job.json")
        let job = Self.job(entry.id, in: entry.folder, layout: layout, record: record)
        let running = job.state == .running
        return JobRow(id: entry.id, state: job.state, input: record?.original ?? "", host: running ? HostName.current : nil,
                      attempts: job.attempts, code: job.reason?.code, createdAt: record?.receivedAt ?? entry.changed,
                      updatedAt: entry.changed, micros: entry.cursor.micros, progress: running ? job.progress : nil,
                      playable: job.playable == true)
    }
}
