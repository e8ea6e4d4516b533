import Foundation

/// What an operator's console reads from a store besides ``JobStore/job(_:)``: pages of jobs,
/// one job's history, and the overview all viewers share. Both stores answer it: the spool from
/// its folders and event log, the queue from its tables (keyset pages, capped scans).
public protocol JobBrowser: Sendable {
    /// Jobs by state (each count capped at `cap`), failures by reason code over the last day,
    /// running jobs' leases and the hosts' last heartbeats.
    func overview(cap: Int) async throws -> JobOverview
    /// One page of jobs matching `query`, most recently changed first.
    func jobs(_ query: JobQuery) async throws -> JobPage
    /// Each state's `limit` most recently changed jobs, in one read (the console's tabs; the
    /// first page of all states is among them).
    func latest(perState limit: Int) async throws -> [JobRow]
    /// Job `id`'s events, oldest first (its last `limit`).
    func history(_ id: String, limit: Int) async throws -> [JobHistoryEvent]
    /// What ended, became playable and entered or left the queue from `since` on, in
    /// `step`-second buckets, per bucket and per window, for every host and each (the charts).
    func activity(since: Date, step: Int) async throws -> [ActivityTally]
    /// Calls `wake` whenever a job may have changed (the queue's notifications), until
    /// cancelled; a store without notifications returns at once (the console then polls).
    func changes(_ wake: @escaping @Sendable () -> Void) async
}

/// A filter over jobs, kept in the console's URL, plus where the page starts.
public struct JobQuery: Sendable, Equatable {
    public var state: JobSnapshot.State?
    /// Part of the id or of the input's path.
    public var text: String?
    /// The host that ran (or runs) its last attempt.
    public var host: String?
    /// The reason's code (`duration_limit`, `corrupt_input`…).
    public var code: String?
    /// At least this many attempts.
    public var minAttempts: Int?
    /// Changed at or after this time.
    public var since: Date?
    /// The page starts after this job (the previous page's ``JobPage/next``).
    public var after: JobCursor?
    public var limit: Int

    public init(state: JobSnapshot.State? = nil, text: String? = nil, host: String? = nil, code: String? = nil,
                minAttempts: Int? = nil, since: Date? = nil, after: JobCursor? = nil, limit: Int = 50) {
        self.state = state
        self.text = text
        self.host = host
        self.code = code
        self.minAttempts = minAttempts
        self.since = since
        self.after = after
        self.limit = limit
    }

    /// Whether `row` passes every filter but the state and the cursor (which a store applies
    /// by where it looks).
    public func matches(_ row: JobRow) -> Bool {
        if let text, !row.id.contains(text), !row.input.contains(text) { return false }
        if let host, row.host != host { return false }
        if let code, row.code != code { return false }
        if let minAttempts, row.attempts < minAttempts { return false }
        if let since, row.updatedAt < since { return false }
        return true
    }

    /// True when only the state (and no cursor) is set: a tab's first page, which the console's
    /// shared snapshot holds.
    public var isTab: Bool {
        text == nil && host == nil && code == nil && minAttempts == nil && since == nil && after == nil
    }
}

/// Where a page of jobs ends: the last row's change time (microseconds) and id, the keyset
/// `(updated_at, id)` the next page continues below.
public struct JobCursor: Sendable, Equatable, Comparable {
    public var micros: Int64
    public var id: String

    public init(micros: Int64, id: String) {
        self.micros = micros
        self.id = id
    }

    public init(_ row: JobRow) { self = row.cursor }

    /// `<micros>.<id>`, as in the console's `after=` parameter.
    public init?(_ text: String) {
        guard let dot = text.firstIndex(of: "."), let micros = Int64(text[..<dot]) else { return nil }
        self.init(micros: micros, id: String(text[text.index(after: dot)...]))
    }

    public var text: String { "\(micros).\(id)" }

    /// Later changes (and, at one time, larger ids) come first in a page.
    public static func < (a: JobCursor, b: JobCursor) -> Bool { (a.micros, a.id) < (b.micros, b.id) }
}

/// One job in a list.
public struct JobRow: Sendable, Equatable {
    public var id: String
    public var state: JobSnapshot.State
    /// The input's path (the spool: the original's name).
    public var input: String
    /// The host of its last attempt (the spool: this host while it runs).
    public var host: String?
    public var attempts: Int
    /// The reason's code, once rejected or failed (or a retried attempt's).
    public var code: String?
    public var createdAt: Date
    public var updatedAt: Date
    /// 0–100 while running.
    public var progress: Int?
    /// A running job's video can be played already.
    public var playable: Bool
    /// Where a page ending at this row stops: its change time to the microsecond, as the store
    /// keeps it (a `Date` may round it).
    public var cursor: JobCursor

    public init(id: String, state: JobSnapshot.State, input: String, host: String? = nil, attempts: Int, code: String? = nil,
                createdAt: Date, updatedAt: Date, micros: Int64? = nil, progress: Int? = nil, playable: Bool = false) {
        self.id = id
        self.state = state
        self.input = input
        self.host = host
        self.attempts = attempts
        self.code = code
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.progress = progress
        self.playable = playable
        cursor = JobCursor(micros: micros ?? Int64((updatedAt.timeIntervalSince1970 * 1_000_000).rounded()), id: id)
    }
}

/// A page of jobs, and where the next starts (nil: this is the last).
public struct JobPage: Sendable, Equatable {
    public var rows: [JobRow]
    public var next: JobCursor?

    public init(rows: [JobRow], next: JobCursor?) {
        self.rows = rows
        self.next = next
    }
}

/// What every console viewer sees at the top of each page (``JobBrowser/overview(cap:)``).
public struct JobOverview: Sendable, Equatable {
    /// Jobs by state, each counted up to the cap.
    public var states: JobStoreStatus
    /// The cap the counts stop at (a count equal to it means "at least").
    public var cap: Int
    /// Rejections and failures of the last day, by state and reason code, most first.
    public var failures: [FailureGroup]
    /// Running jobs, the lease ending soonest first.
    public var leases: [Lease]
    /// Worker hosts seen in the last day (the queue's `ingestd_hosts`; none for the spool).
    public var hosts: [HostBeat]

    public init(states: JobStoreStatus, cap: Int, failures: [FailureGroup] = [], leases: [Lease] = [], hosts: [HostBeat] = []) {
        self.states = states
        self.cap = cap
        self.failures = failures
        self.leases = leases
        self.hosts = hosts
    }

    public struct FailureGroup: Sendable, Equatable {
        public var state: JobSnapshot.State
        public var code: String
        public var lastHour: Int
        public var lastDay: Int

        public init(state: JobSnapshot.State, code: String, lastHour: Int, lastDay: Int) {
            self.state = state
            self.code = code
            self.lastHour = lastHour
            self.lastDay = lastDay
        }
    }

    /// A running attempt's hold on its job.
    public struct Lease: Sendable, Equatable {
        public var id: String
        public var holder: String
        public var token: Int64
        /// When it runs out unless renewed (nil: the spool's lock, held until its process dies).
        public var expiresAt: Date?

        public init(id: String, holder: String, token: Int64, expiresAt: Date?) {
            self.id = id
            self.holder = holder
            self.token = token
            self.expiresAt = expiresAt
        }
    }
}

/// A worker host's last heartbeat, written by its upkeep.
public struct HostBeat: Sendable, Equatable {
    public var name: String
    public var version: String
    public var startedAt: Date
    public var seenAt: Date
    /// Whether it claims work; `problem` says why not.
    public var ready: Bool
    public var problem: String?
    public var running: Int

    public init(name: String, version: String, startedAt: Date, seenAt: Date, ready: Bool, problem: String?, running: Int) {
        self.name = name
        self.version = version
        self.startedAt = startedAt
        self.seenAt = seenAt
        self.ready = ready
        self.problem = problem
        self.running = running
    }
}

/// One event of a job's history: `attempt`, `published`, `retry`, `retried`…, with its fields
/// as a JSON object.
public struct JobHistoryEvent: Sendable, Equatable {
    public var at: Date
    public var event: String
    public var data: String

    public init(at: Date, event: String, data: String) {
        self.at = at
        self.event = event
        self.data = data
    }
}
