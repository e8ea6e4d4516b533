import PostgresNIO

/// The queue's hot statements, prepared once per connection (the server parses and plans them
/// once instead of on every job).
enum QueueStatements {
    /// The oldest due job becomes `running` for one more attempt (token + 1), with its event.
    struct Claim: PostgresPreparedStatement {
        static let sql = """
            WITH claimed AS (
                UPDATE ingestd_jobs
                   SET state = 'running', attempts = attempts + 1, token = token + 1, worker = $1::text,
                       lease_until = now() + make_interval(secs => $2::float8), updated_at = now()
                 WHERE id = (SELECT id FROM ingestd_jobs
                              WHERE state = 'queued' AND run_at <= now()
                                -- not a job this host found its input missing for, while other hosts may confirm it
                                AND NOT (split_part($1::text, '/', 1) = ANY(missing_on)
                                         AND missing_since > now() - make_interval(secs => \(JobQueue.missingWindow.seconds)))
                              ORDER BY run_at, id
                              LIMIT 1
                              FOR UPDATE SKIP LOCKED)
                RETURNING id, token, attempts, input, input_kind, preset, upload_id, playback
            ), logged AS (
                INSERT INTO ingestd_job_events (job_id, event, data)
                SELECT id, 'claimed', jsonb_build_object('worker', $1::text, 'attempt', attempts) FROM claimed
            )
            SELECT id, token, attempts, input, input_kind, preset, upload_id, playback FROM claimed
            """
        typealias Row = (String, Int64, Int, String, String, String, String?, String?)
        var worker: String
        var leaseSeconds: Double

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings()
            bindings.append(worker)
            bindings.append(leaseSeconds)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    /// Renews an attempt's lease if it still holds the job.
    struct Heartbeat: PostgresPreparedStatement {
        static let sql = """
            UPDATE ingestd_jobs SET lease_until = now() + make_interval(secs => $1::float8), updated_at = now()
             WHERE id = $2::text AND token = $3::bigint AND state = 'running'
            RETURNING 1
            """
        typealias Row = Int
        var leaseSeconds: Double
        var id: String
        var token: Int64

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings()
            bindings.append(leaseSeconds)
            bindings.append(id)
            bindings.append(token)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Int { try row.decode(Int.self) }
    }

    /// Marks the job published where it plays (`place`, its JSON), with its event, if the
    /// attempt still holds it.
    struct Publish: PostgresPreparedStatement {
        static let sql = """
            WITH published AS (
                UPDATE ingestd_jobs SET state = 'published', output = $1::text, manifest = $2::text::jsonb, place = $5::text::jsonb, playback = $6::text,
                       lease_until = NULL, reason = NULL, missing_on = '{}', missing_since = NULL, updated_at = now(), finished_at = now()
                 WHERE id = $3::text AND token = $4::bigint AND state = 'running'
                RETURNING id, attempts, worker
            ), logged AS (
                INSERT INTO ingestd_job_events (job_id, event, data)
                SELECT id, 'published', jsonb_build_object('output', $1::text, 'attempt', attempts, 'worker', worker) FROM published
            )
            SELECT 1 FROM published
            """
        typealias Row = Int
        var output: String
        var manifest: String
        var id: String
        var token: Int64
        var place: String
        var playback: String

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings()
            bindings.append(output)
            bindings.append(manifest)
            bindings.append(id)
            bindings.append(token)
            bindings.append(place)
            bindings.append(playback)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Int { try row.decode(Int.self) }
    }

    /// Marks the running attempt's video playable at `output` (`CDN/<id>`; `place`, its JSON), with its event, if
    /// the attempt still holds the job; the row stays locked until the surrounding transaction
    /// ends. Answers the seconds since the job was queued (the database's clock).
    struct Playable: PostgresPreparedStatement {
        static let sql = """
            WITH shown AS (
                UPDATE ingestd_jobs SET playable_token = token, playable_at = now(), output = $1::text, place = $4::text::jsonb,
                       playback = $5::text, updated_at = now()
                 WHERE id = $2::text AND token = $3::bigint AND state = 'running'
                RETURNING id, attempts, worker, extract(epoch FROM now() - created_at)::float8 AS after, extract(epoch FROM now())::float8 AS at
            ), logged AS (
                INSERT INTO ingestd_job_events (job_id, event, data)
                SELECT id, 'playable', jsonb_build_object('output', $1::text, 'attempt', attempts, 'worker', worker,
                                                          'playableAfterSeconds', round(after::numeric, 3)) FROM shown
            )
            SELECT after, at FROM shown
            """
        typealias Row = (Double, Double)
        var output: String
        var id: String
        var token: Int64
        var place: String
        var playback: String

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings()
            bindings.append(output)
            bindings.append(id)
            bindings.append(token)
            bindings.append(place)
            bindings.append(playback)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }
}
