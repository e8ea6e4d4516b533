import Logging
import PostgresNIO

/// The queue's tables, as numbered migrations applied in order under an advisory lock, so any
/// number of workers starting at once apply each exactly once.
public enum QueueSchema {
    /// Each migration is a list of statements, run in one transaction.
    static let migrations: [[String]] = [
        [
            """
            CREATE TABLE ingestd_jobs (
                id          text PRIMARY KEY,
                state       text NOT NULL CHECK (state IN ('queued', 'running', 'published', 'rejected', 'failed')),
                input       text NOT NULL,
                -- 'path': a file or upload directory; 'sole_entry_of': the one entry of this
                -- directory, whatever bytes its name is made of (a spool's queued/<id>/upload).
                input_kind  text NOT NULL DEFAULT 'path' CHECK (input_kind IN ('path', 'sole_entry_of')),
                preset      text NOT NULL,
                attempts    integer NOT NULL DEFAULT 0,
                token       bigint NOT NULL DEFAULT 0,
                run_at      timestamptz NOT NULL DEFAULT now(),
                lease_until timestamptz,
                worker      text,
                output      text,
                reason      jsonb,
                manifest    jsonb,
                created_at  timestamptz NOT NULL DEFAULT now(),
                updated_at  timestamptz NOT NULL DEFAULT now(),
                finished_at timestamptz
            )
            """,
            // What a claim scans: only queued rows, in run order.
            "CREATE INDEX ingestd_jobs_claimable ON ingestd_jobs (run_at, id) WHERE state = 'queued'",
            // What the lease rescuer scans: only running rows, by lease end.
            "CREATE INDEX ingestd_jobs_leases ON ingestd_jobs (lease_until) WHERE state = 'running'",
            """
            CREATE TABLE ingestd_job_events (
                job_id text NOT NULL REFERENCES ingestd_jobs (id) ON DELETE CASCADE,
                at     timestamptz NOT NULL DEFAULT clock_timestamp(),
                event  text NOT NULL,
                data   jsonb NOT NULL DEFAULT '{}'
            )
            """,
            "CREATE INDEX ingestd_job_events_job ON ingestd_job_events (job_id, at)",
        ],
        [
            // The fleet's webhook outbox: an event is inserted in the transaction that ends its
            // job, so it exists exactly when the job's end does.
            """
            CREATE TABLE ingestd_webhooks (
                id              text PRIMARY KEY,
                job_id          text NOT NULL REFERENCES ingestd_jobs (id) ON DELETE CASCADE,
                type            text NOT NULL,
                body            text NOT NULL,
                state           text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'dead')),
                attempts        integer NOT NULL DEFAULT 0,
                next_attempt_at timestamptz NOT NULL DEFAULT now(),
                -- A sender's reservation, so senders on other hosts skip the event meanwhile.
                reserved_until  timestamptz,
                last_error      text,
                created_at      timestamptz NOT NULL DEFAULT now(),
                delivered_at    timestamptz
            )
            """,
            "CREATE INDEX ingestd_webhooks_due ON ingestd_webhooks (next_attempt_at) WHERE state = 'pending'",
        ],
        // The `id` in an upload directory's upload.json, for the events made in SQL (a lease's rescue).
        // Job events by age, for pruning (JobQueue.pruneEvents).
        ["ALTER TABLE ingestd_jobs ADD COLUMN upload_id text", "CREATE INDEX ingestd_job_events_at ON ingestd_job_events (at)"],
        // Hosts that found a job's input missing, and since when: a missing input is charged to
        // the upload only once a second host confirms it (PostgresStore.inputMissing).
        ["ALTER TABLE ingestd_jobs ADD COLUMN missing_on text[] NOT NULL DEFAULT '{}', ADD COLUMN missing_since timestamptz"],
        // `serve` in fleet mode (#31): each tus upload's state; its bytes are parts of an S3
        // multipart upload plus an unsent tail object (FleetUploadStore in Uploads).
        [
            """
            CREATE TABLE ingestd_uploads (
                id            text NOT NULL,
                part          integer NOT NULL,
                length        bigint NOT NULL,
                -- Bytes acknowledged: in `parts` and the tail object.
                upload_offset bigint NOT NULL DEFAULT 0,
                name          text NOT NULL,
                metadata      text,
                key           text NOT NULL,
                multipart_id  text NOT NULL,
                -- [{number, etag, size}] of the parts sent.
                parts         jsonb NOT NULL DEFAULT '[]',
                -- The bytes after the parts (fewer than a part's minimum), in the object tail_key.
                tail          bigint NOT NULL DEFAULT 0,
                tail_key      text,
                interrupted   boolean NOT NULL DEFAULT false,
                expires_at    timestamptz NOT NULL,
                terminated    boolean NOT NULL DEFAULT false,
                completed     boolean NOT NULL DEFAULT false,
                enqueued      boolean NOT NULL DEFAULT false,
                -- The one request writing it, until lease_until.
                writer        text,
                lease_until   timestamptz,
                created_at    timestamptz NOT NULL DEFAULT now(),
                updated_at    timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (id, part)
            )
            """,
            "CREATE INDEX ingestd_uploads_expiry ON ingestd_uploads (expires_at)",
        ],
        // A running job's progress, 0–100 (PostgresStore.progress), for `GET /v1/jobs/{id}` in
        // fleet mode: good for the attempt whose token wrote it, and only while that one runs.
        ["ALTER TABLE ingestd_jobs ADD COLUMN progress integer, ADD COLUMN progress_token bigint, ADD COLUMN progress_at timestamptz"],
        // The next S3 part number of a fleet upload, handed out under the writer's lease
        // (FleetUploadRows.nextPart): no two writers ever send a part under one number.
        ["ALTER TABLE ingestd_uploads ADD COLUMN next_part integer NOT NULL DEFAULT 1",
         "UPDATE ingestd_uploads SET next_part = jsonb_array_length(parts) + 1"],
        // Upload sets in fleet mode (#31): how many uploads make the job (1: a lone video file; more:
        // an upload set, one row per file, `part` its index).
        ["ALTER TABLE ingestd_uploads ADD COLUMN files integer NOT NULL DEFAULT 1"],
        // A running attempt's video is played while it is made (#41): the token of the attempt
        // that showed it (good only while that attempt runs, as `progress_token`) and when.
        ["ALTER TABLE ingestd_jobs ADD COLUMN playable_token bigint, ADD COLUMN playable_at timestamptz"],
        // The operator console (#42): keyset pages of jobs (all, or by state) latest change
        // first; the day's rejections and failures by code; each worker host's heartbeat.
        [
            "CREATE INDEX ingestd_jobs_recent ON ingestd_jobs (updated_at DESC, id DESC)",
            "CREATE INDEX ingestd_jobs_state_recent ON ingestd_jobs (state, updated_at DESC, id DESC)",
            "CREATE INDEX ingestd_jobs_ended_badly ON ingestd_jobs (finished_at) WHERE state IN ('rejected', 'failed')",
            """
            CREATE TABLE ingestd_hosts (
                name       text PRIMARY KEY,
                version    text NOT NULL,
                started_at timestamptz NOT NULL,
                seen_at    timestamptz NOT NULL DEFAULT now(),
                ready      boolean NOT NULL,
                problem    text,
                running    integer NOT NULL DEFAULT 0
            )
            """,
        ],
        // How far a shown video is ahead of its earliest viewer (#49): what every rung of the
        // running attempt lists (written with its progress, under `progress_token`).
        ["ALTER TABLE ingestd_jobs ADD COLUMN listed_seconds double precision, ADD COLUMN listed_ended boolean"],
        // Where a video plays (#64): the place its target said it published or showed, as it is
        // (`output` stays its path, which the sweeper compares version names with).
        ["ALTER TABLE ingestd_jobs ADD COLUMN place jsonb"],
        // Deletion (#65): a job can end `deleted`; its tombstone (Ingest's Tombstone) is kept
        // apart, with the lease end of the attempt it fenced out (its files are removed for good
        // only after that) and when nothing of the video was left.
        [
            "ALTER TABLE ingestd_jobs DROP CONSTRAINT IF EXISTS ingestd_jobs_state_check",
            "ALTER TABLE ingestd_jobs ADD CONSTRAINT ingestd_jobs_state_check CHECK (state IN ('queued', 'running', 'published', 'rejected', 'failed', 'deleted'))",
            """
            CREATE TABLE ingestd_deletions (
                id            text PRIMARY KEY,
                tombstone     jsonb NOT NULL,
                writing_until timestamptz,
                completed_at  timestamptz
            )
            """,
            "CREATE INDEX ingestd_deletions_pending ON ingestd_deletions (id) WHERE completed_at IS NULL",
            // Whether the input is ingestd's own (serve's object, a spool's queued/ entry): a deletion removes it.
            "ALTER TABLE ingestd_jobs ADD COLUMN input_owned boolean NOT NULL DEFAULT false",
        ],
        // 15: signed playback. What the producer asked (NULL: nothing), then what the video was
        // shown or published with, then what `ingestd playback` made it.
        [
            "ALTER TABLE ingestd_jobs ADD COLUMN playback text CHECK (playback IN ('public', 'signed'))",
            "ALTER TABLE ingestd_uploads ADD COLUMN playback text CHECK (playback IN ('public', 'signed'))",
        ],
    ]

    /// The schema version this build needs.
    public static var latest: Int { migrations.count }

    /// Applies the migrations not applied yet; returns the versions it applied.
    @discardableResult
    public static func migrate(_ client: PostgresClient, logger: Logger) async throws -> [Int] {
        try await client.withTransaction(within: .seconds(60), logger: logger) { connection in
            // One migrator at a time, across every host (released at commit).
            try await connection.query("SELECT pg_advisory_xact_lock(4242001)", logger: logger)
            try await connection.query("""
                CREATE TABLE IF NOT EXISTS ingestd_schema (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())
                """, logger: logger)
            var current = 0
            for try await version in try await connection.query("SELECT coalesce(max(version), 0) FROM ingestd_schema", logger: logger)
                .decode(Int.self) { current = version }
            var applied: [Int] = []
            for (index, statements) in migrations.enumerated() where index + 1 > current {
                for statement in statements {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await connection.query("INSERT INTO ingestd_schema (version) VALUES (\(index + 1))", logger: logger)
                applied.append(index + 1)
            }
            return applied
        }
    }
}
