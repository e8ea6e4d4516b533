import Foundation
import Ingest
import Logging
import PostgresNIO

/// The console's reads over the queue: keyset pages on `(updated_at, id)` (indexes
/// `ingestd_jobs_recent` and `ingestd_jobs_state_recent`), counts capped per state, the day's
/// failures from a partial index, and `ingestd_hosts`.
extension PostgresStore: JobBrowser {
    public func jobs(_ query: JobQuery) async throws -> JobPage {
        try await described {
            try await queue.client.withConnection(within: queue.timeout) { [logger = queue.logger] connection in
                let text = query.text.map { Self.likeEscaped($0) }
                let rows = try await connection.query("""
                    SELECT \(unescaped: Self.rowColumns)
                      FROM ingestd_jobs
                     WHERE (\(query.state?.rawValue)::text IS NULL OR state = \(query.state?.rawValue))
                       AND (\(text)::text IS NULL OR id LIKE '%' || \(text) || '%' OR input LIKE '%' || \(text) || '%')
                       AND (\(query.host)::text IS NULL OR worker = \(query.host))
                       AND (\(query.code)::text IS NULL OR reason ->> 'code' = \(query.code))
                       AND (\(query.minAttempts)::integer IS NULL OR attempts >= \(query.minAttempts))
                       AND (\(query.since)::timestamptz IS NULL OR updated_at >= \(query.since))
                       AND (\(query.after?.micros)::bigint IS NULL
                            OR (updated_at, id) < (timestamptz 'epoch' + \(query.after?.micros) * interval '1 microsecond', \(query.after?.id)))
                     ORDER BY updated_at DESC, id DESC
                     LIMIT \(query.limit + 1)
                    """, logger: logger)
                var page = try await Self.rows(rows)
                guard page.count > query.limit else { return JobPage(rows: page, next: nil) }
                page.removeLast()
                return JobPage(rows: page, next: page.last?.cursor)
            }
        }
    }

    /// One index scan per state (`ingestd_jobs_state_recent`), in one statement.
    public func latest(perState limit: Int) async throws -> [JobRow] {
        try await described {
            try await queue.client.withConnection(within: queue.timeout) { [logger = queue.logger] connection in
                try await Self.rows(try await connection.query("""
                    SELECT j.* FROM unnest(ARRAY['queued', 'running', 'published', 'rejected', 'failed']) AS s(state)
                     CROSS JOIN LATERAL (SELECT \(unescaped: Self.rowColumns) FROM ingestd_jobs WHERE state = s.state
                                          ORDER BY updated_at DESC, id DESC LIMIT \(limit)) j
                    """, logger: logger))
            }
        }
    }

    /// What a ``JobRow`` is read from (``rows(_:)`` decodes them in this order).
    static let rowColumns = """
        id, state, input, worker, attempts, reason ->> 'code', created_at, updated_at,
        (extract(epoch FROM updated_at) * 1000000)::bigint, \(JobQueue.attemptColumns)
        """

    static func rows(_ rows: PostgresRowSequence) async throws -> [JobRow] {
        var read: [JobRow] = []
        for try await (id, state, input, worker, attempts, code, created, updated, micros, progress, playable)
            in rows.decode((String, String, String, String?, Int, String?, Date, Date, Int64, Int?, Bool).self) {
            guard let state = JobSnapshot.State(rawValue: state) else { continue }
            read.append(JobRow(id: id, state: state, input: input, host: worker, attempts: attempts, code: code, createdAt: created,
                               updatedAt: updated, micros: micros, progress: progress, playable: playable))
        }
        return read
    }

    /// `text` with LIKE's wildcards taken literally.
    static func likeEscaped(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%").replacingOccurrences(of: "_", with: "\\_")
    }

    public func overview(cap: Int) async throws -> JobOverview {
        try await described {
            try await queue.client.withConnection(within: queue.timeout) { [logger = queue.logger] connection in
                var overview = JobOverview(states: try await Self.cappedStatus(connection, cap: cap, logger: logger), cap: cap)
                let failures = try await connection.query("""
                    SELECT state, coalesce(reason ->> 'code', 'unknown'),
                           count(*) FILTER (WHERE finished_at >= now() - interval '1 hour')::integer, count(*)::integer
                      FROM ingestd_jobs WHERE state IN ('rejected', 'failed') AND finished_at >= now() - interval '1 day'
                     GROUP BY 1, 2 ORDER BY 4 DESC, 2 LIMIT 100
                    """, logger: logger)
                for try await (state, code, hour, day) in failures.decode((String, String, Int, Int).self) {
                    overview.failures.append(.init(state: state == "failed" ? .failed : .rejected, code: code, lastHour: hour, lastDay: day))
                }
                let leases = try await connection.query("""
                    SELECT id, coalesce(worker, ''), token, lease_until FROM ingestd_jobs WHERE state = 'running' ORDER BY lease_until LIMIT 200
                    """, logger: logger)
                for try await (id, holder, token, until) in leases.decode((String, String, Int64, Date?).self) {
                    overview.leases.append(.init(id: id, holder: holder, token: token, expiresAt: until))
                }
                let hosts = try await connection.query("""
                    SELECT name, version, started_at, seen_at, ready, problem, running FROM ingestd_hosts
                     WHERE seen_at >= now() - interval '1 day' ORDER BY name LIMIT 500
                    """, logger: logger)
                for try await (name, version, started, seen, ready, problem, running)
                    in hosts.decode((String, String, Date, Date, Bool, String?, Int).self) {
                    overview.hosts.append(HostBeat(name: name, version: version, startedAt: started, seenAt: seen, ready: ready,
                                                   problem: problem, running: running))
                }
                return overview
            }
        }
    }

    /// Jobs by state, each counted up to `cap` (an index-only scan of at most `cap` entries per
    /// state, whatever the table's size).
    static func cappedStatus(_ connection: PostgresConnection, cap: Int, logger: Logger) async throws -> JobStoreStatus {
        var status = JobStoreStatus()
        let rows = try await connection.query("""
            SELECT s.state, (SELECT count(*) FROM (SELECT 1 FROM ingestd_jobs j WHERE j.state = s.state LIMIT \(cap)) c)::integer
              FROM unnest(ARRAY['queued', 'running', 'published', 'rejected', 'failed']) AS s(state)
            """, logger: logger)
        for try await (state, count) in rows.decode((String, Int).self) {
            if let state = JobSnapshot.State(rawValue: state) { status[state] = count }
        }
        return status
    }

    public func history(_ id: String, limit: Int) async throws -> [JobHistoryEvent] {
        try await described {
            try await queue.client.withConnection(within: queue.timeout) { [logger = queue.logger] connection in
                let rows = try await connection.query("""
                    SELECT at, event, data::text FROM (
                        SELECT at, event, data FROM ingestd_job_events WHERE job_id = \(id) ORDER BY at DESC LIMIT \(limit)) e
                     ORDER BY at
                    """, logger: logger)
                var events: [JobHistoryEvent] = []
                for try await (at, event, data) in rows.decode((Date, String, String).self) {
                    events.append(JobHistoryEvent(at: at, event: event, data: data))
                }
                return events
            }
        }
    }

    public func changes(_ wake: @escaping @Sendable () -> Void) async { await listen(on: JobQueue.changes, wake) }

    public func beat(ready: Bool, problem: String?, running: Int) async throws {
        try await described {
            try await queue.client.withConnection(within: queue.timeout) { [logger = queue.logger, worker, startedAt] connection in
                try await connection.query("""
                    INSERT INTO ingestd_hosts (name, version, started_at, seen_at, ready, problem, running)
                    VALUES (\(worker), \(IngestdVersion.current), \(startedAt), now(), \(ready), \(problem), \(running))
                    ON CONFLICT (name) DO UPDATE SET version = excluded.version, started_at = excluded.started_at, seen_at = now(),
                           ready = excluded.ready, problem = excluded.problem, running = excluded.running
                    """, logger: logger)
            }
        }
    }
}
