#!/usr/bin/env python3
"""make bench-console (issue #42): what `ingestd console` costs the database and how fast its
pages answer, with 100 000 jobs in a real PostgreSQL queue.

  console.py INGESTD OUT_DIR [JOBS]

1. A throwaway PostgreSQL (initdb + pg_ctl on a free loopback port) logging every statement
   with its user (`log_statement=all`, `log_line_prefix='%u '`); the console connects as its own
   role, `console`, so its statements are counted apart from the fill and the updater's.
2. JOBS jobs (default 100 000): 90 % published, 5 % failed (four reason codes), 3 % rejected,
   1.5 % queued, 0.5 % running (20 workers with leases), changed over the last two days; three
   events each for 1 000 of them; for each job of the last day, the events the charts count
   (queued, claimed, playable, its end; JOBS × 2 rows); 20 worker heartbeats.
3. Page latency: each page 40 times in a row over one keep-alive connection (p50 / p95 / max ms):
   the overview, the all and failed tabs (the shared snapshot), the next page of a tab (a
   keyset read), a reason filter (with its "retry all" count), a text search, a job's detail, a
   tab as JSON.
4. Database load: for 30 s, an updater changes one job every 0.5 s (and NOTIFYs, as workers do);
   the statements the console runs are counted with 1 open page, then with 50 (Server-Sent
   Events, each receiving every snapshot). Beside them, the baseline: a console that counts per
   viewer, as Sidekiq's and Oban's dashboards did (each open page polls `GROUP BY state` and its
   list every 5 s), measured the same way for 50 viewers.
5. The charts' one statement (#70): its duration in the database (`log_min_duration_statement`)
   for the hour window (read with every snapshot) and the day's (once a minute), p50 and max.
Prints a table and writes OUT_DIR/console.json.
"""
import http.client
import json
import os
import re
import statistics
import subprocess
import sys
import threading
import time
import urllib.parse

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from throwaway_pg import ThrowawayPostgres, free_port  # noqa: E402

INGESTD, OUT = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
JOBS = int(sys.argv[3]) if len(sys.argv) > 3 else 100_000
TOKEN = "operate-bench-console-0123456789"
os.makedirs(OUT, exist_ok=True)


class Postgres(ThrowawayPostgres):
    """The queue (lib/throwaway_pg.py), logging every statement with its user."""

    def __init__(self, directory):
        super().__init__(directory, options="-c log_statement=all -c log_min_duration_statement=0 -c \"log_line_prefix=%u \"")
        self.console_url = f"postgres://console@127.0.0.1:{self.port}/ingestd"

    def console_statements(self):
        """Statements the `console` role has run so far (lines of the server's log)."""
        with open(self.log, errors="replace") as f:
            return sum(1 for line in f if line.startswith("console ") and re.search(r"LOG:  (statement|execute)", line))

    def activity_durations(self):
        """The charts' statement as the console ran it: milliseconds by window step (60: the hour,
        900: the day). With log_statement on, an execute's duration is a bare line after its text
        and parameters."""
        durations, statement, step = {}, None, None
        with open(self.log, errors="replace") as f:
            for line in f:
                if line.startswith("console LOG:  execute "):
                    statement, step = "", None
                elif line.startswith("console DETAIL:  parameters:") and statement is not None:
                    found = re.search(r"\$2 = '([0-9]+)'", line)
                    step = found.group(1) if found and "GROUPING SETS" in statement else None
                elif line.startswith("console LOG:  duration:") and statement is not None:
                    found = re.match(r"console LOG:  duration: ([0-9.]+) ms\s*$", line)
                    if found and step:
                        durations.setdefault(step, []).append(float(found.group(1)))
                    statement = None
                elif statement is not None:
                    statement += line
        return durations


def fill(pg):
    subprocess.run([INGESTD, "db", "migrate", "--database", pg.url], check=True, stdout=subprocess.DEVNULL)
    pg.sql(f"""
        INSERT INTO ingestd_jobs (id, state, input, preset, attempts, worker, token, lease_until, reason, created_at, updated_at, finished_at)
        SELECT 'job-' || lpad(g::text, 6, '0'),
               s.state, '/uploads/' || g || '/clip.mp4', 'default',
               CASE WHEN s.state IN ('failed') THEN 3 ELSE 1 END,
               CASE WHEN s.state = 'queued' THEN NULL ELSE 'host-' || (g % 20) || '/' || (1000 + g % 20) END,
               1, CASE WHEN s.state = 'running' THEN now() + interval '25 seconds' END,
               CASE WHEN s.state IN ('failed', 'rejected')
                    THEN jsonb_build_object('code', (ARRAY['corrupt_input', 'duration_limit', 'timeout', 'lease_expired'])[1 + g % 4],
                                            'message', 'why ' || g, 'attempts', 3) END,
               at - interval '5 seconds', at, CASE WHEN s.state IN ('published', 'failed', 'rejected') THEN at END
          FROM generate_series(1, {JOBS}) g,
               LATERAL (SELECT CASE WHEN g % 200 = 0 THEN 'running' WHEN g % 200 <= 3 THEN 'queued' WHEN g % 100 < 5 THEN 'failed'
                                    WHEN g % 100 < 8 THEN 'rejected' ELSE 'published' END AS state,
                               now() - (g::float8 / {JOBS}) * interval '2 days' AS at) s;
        INSERT INTO ingestd_job_events (job_id, event, data, at)
        SELECT id, e, '{{"attempt": 1}}', updated_at FROM ingestd_jobs, unnest(ARRAY['queued', 'attempt', 'published']) e WHERE id <= 'job-001000';
        INSERT INTO ingestd_job_events (job_id, event, data, at)
        SELECT id, e.name, jsonb_build_object('attempt', 1, 'worker', worker, 'playableAfterSeconds', 1 + (hashtext(id) & 1023) / 512.0),
               updated_at - e.before
          FROM ingestd_jobs,
               LATERAL (VALUES ('queued', interval '5 seconds'), ('claimed', interval '4 seconds'), ('playable', interval '3 seconds'),
                               (state, interval '0 seconds')) e(name, before)
         WHERE updated_at > now() - interval '1 day' AND state IN ('published', 'failed', 'rejected');
        INSERT INTO ingestd_hosts (name, version, started_at, seen_at, ready, running)
        SELECT 'host-' || g || '/' || (1000 + g), '0.2.0', now() - interval '1 hour', now(), true, 1 FROM generate_series(0, 19) g;
        CREATE ROLE console LOGIN;
        GRANT ALL ON SCHEMA public TO console;
        GRANT ALL ON ALL TABLES IN SCHEMA public TO console;
        ANALYZE;
        """)


def start_console(pg):
    tokens = os.path.join(OUT, "console.tokens")
    with open(tokens, "w") as f:
        f.write(f"operate {TOKEN}\n")
    os.chmod(tokens, 0o600)
    port = free_port()
    log = open(os.path.join(OUT, "console.log"), "w")
    process = subprocess.Popen([INGESTD, "console", "--database", pg.console_url, "--http", f"127.0.0.1:{port}",
                                "--console-tokens-file", tokens], stdout=subprocess.DEVNULL, stderr=log)
    for _ in range(300):
        try:
            http.client.HTTPConnection("127.0.0.1", port, timeout=1).request("GET", "/healthz")
            break
        except OSError:
            time.sleep(0.1)
    return process, port


def get(connection, path, accept="text/html"):
    connection.request("GET", path, headers={"Authorization": f"Bearer {TOKEN}", "Accept": accept})
    response = connection.getresponse()
    body = response.read()
    if response.status != 200:
        raise RuntimeError(f"GET {path}: {response.status} {body[:200]!r}")
    return body


def latency(port, path, accept="text/html", rounds=40):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    get(connection, path, accept)  # warm
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        get(connection, path, accept)
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    return {"p50": statistics.median(times), "p95": times[int(len(times) * 0.95) - 1], "max": times[-1]}


def updater(pg_port, stop):
    """One job changes every 0.5 s, as a worker's end does (the row, then NOTIFY)."""
    n = 0
    while not stop.is_set():
        n += 1
        subprocess.run(["psql", "-X", "-q", "-h", "127.0.0.1", "-p", str(pg_port), "-U", "ingestd", "-d", "ingestd", "-c",
                        f"UPDATE ingestd_jobs SET updated_at = now() WHERE id = 'job-{(n % 1000) + 1:06d}'; "
                        f"SELECT pg_notify('ingestd_job_changes', 'job-{n}')"], stdout=subprocess.DEVNULL)
        stop.wait(0.5)


def viewers(port, count, stop, opened):
    """`count` open pages, each following the event stream and counting its snapshots."""
    received = [0] * count

    def follow(i):
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        connection.request("GET", "/console/events?view=tab%3Afailed", headers={"Authorization": f"Bearer {TOKEN}"})
        response = connection.getresponse()
        opened.append(i)
        while not stop.is_set():
            line = response.fp.readline()
            if not line:
                return
            if line.startswith(b"event: snapshot"):
                received[i] += 1
        connection.close()

    threads = [threading.Thread(target=follow, args=(i,), daemon=True) for i in range(count)]
    for t in threads:
        t.start()
    return received


def load(pg, port, count, seconds=30):
    stop, opened = threading.Event(), []
    received = viewers(port, count, stop, opened)
    while len(opened) < count:
        time.sleep(0.05)
    time.sleep(1)
    before = pg.console_statements()
    update = threading.Thread(target=updater, args=(pg.port, stop), daemon=True)
    update.start()
    time.sleep(seconds)
    stop.set()
    update.join()
    after = pg.console_statements()
    return {"viewers": count, "statements": after - before, "per_minute": (after - before) * 60 / seconds,
            "snapshots_per_viewer": statistics.median(received)}


def baseline(pg, count, seconds=30):
    """Per-viewer counting: each of `count` pages polls the counts and its list every 5 s."""
    stop = threading.Event()
    statements = [0] * count

    def poll(i):
        time.sleep(5 * i / count)
        while not stop.is_set():
            subprocess.run(["psql", "-X", "-q", "-h", "127.0.0.1", "-p", str(pg.port), "-U", "console", "-d", "ingestd", "-c",
                            "SELECT state, count(*) FROM ingestd_jobs GROUP BY state", "-c",
                            "SELECT id, state FROM ingestd_jobs WHERE state = 'failed' ORDER BY updated_at DESC, id DESC LIMIT 50"],
                           stdout=subprocess.DEVNULL)
            statements[i] += 2
            stop.wait(5)

    before = pg.console_statements()
    threads = [threading.Thread(target=poll, args=(i,), daemon=True) for i in range(count)]
    for t in threads:
        t.start()
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join()
    after = pg.console_statements()
    timing = pg.sql("EXPLAIN (ANALYZE, FORMAT JSON) SELECT state, count(*) FROM ingestd_jobs GROUP BY state")
    return {"viewers": count, "statements": after - before, "per_minute": (after - before) * 60 / seconds,
            "group_by_ms": json.loads(timing)[0]["Execution Time"]}


def main():
    pg = Postgres(os.path.join(OUT, "pg"))
    console = None
    try:
        started = time.time()
        fill(pg)
        print(f"filled {JOBS} jobs in {time.time() - started:.1f} s", flush=True)
        console, port = start_console(pg)
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        first = json.loads(get(connection, "/console/jobs?state=published", "application/json"))
        pages = [
            ("overview (snapshot)", "/console/", "text/html"),
            ("all jobs tab (snapshot)", "/console/jobs", "text/html"),
            ("failed tab (snapshot)", "/console/jobs?state=failed", "text/html"),
            ("published, page 2 (keyset)", "/console/jobs?state=published&after=" + urllib.parse.quote(first["next"]), "text/html"),
            ("failed, reason filter + retry-all count", "/console/jobs?state=failed&code=timeout", "text/html"),
            ("text search in id and input", "/console/jobs?q=job-0999", "text/html"),
            ("job detail (row + history)", "/console/jobs/job-000500", "text/html"),
            ("queued tab as JSON", "/console/jobs?state=queued", "application/json"),
        ]
        results = {"jobs": JOBS, "pages": {}, "load": []}
        print(f"\n{'page':44} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}")
        for name, path, accept in pages:
            r = latency(port, path, accept)
            results["pages"][name] = r
            print(f"{name:44} {r['p50']:8.2f} {r['p95']:8.2f} {r['max']:8.2f}", flush=True)
        print(f"\n{'database load, 30 s, one job change / 0.5 s':52} {'statements':>10} {'per min':>8} {'snapshots/viewer':>17}")
        for count in (1, 50):
            r = load(pg, port, count)
            results["load"].append(r)
            print(f"{'ingestd console, ' + str(count) + ' open page' + ('s' if count > 1 else ''):52} {r['statements']:10d} "
                  f"{r['per_minute']:8.0f} {r['snapshots_per_viewer']:17.0f}", flush=True)
        console.terminate()
        console.wait()
        console = None
        b = baseline(pg, 50)
        results["baseline"] = b
        print(f"{'per-viewer counting (Sidekiq/Oban style), 50 pages':52} {b['statements']:10d} {b['per_minute']:8.0f} {'':>17}")
        print(f"\none GROUP BY state over {JOBS} jobs: {b['group_by_ms']:.1f} ms")
        ratio = results["load"][1]["statements"] / max(1, results["load"][0]["statements"])
        print(f"50 open pages / 1 open page, console statements: x{ratio:.2f}")
        results["ratio_50_to_1"] = ratio
        durations = pg.activity_durations()
        results["activity_ms"] = {}
        for step, window in (("60", "hour"), ("900", "day")):
            times = sorted(durations.get(step, []))
            if times:
                results["activity_ms"][window] = {"p50": statistics.median(times), "max": times[-1], "reads": len(times)}
                print(f"the charts' statement, {window} window: p50 {statistics.median(times):.1f} ms, max {times[-1]:.1f} ms "
                      f"({len(times)} reads)")
        events = pg.sql("SELECT count(*) FROM ingestd_job_events WHERE at > now() - interval '1 day'").strip()
        print(f"  over {events} events in the last day")
        worst = max(r["p95"] for r in results["pages"].values())
        print(f"slowest page p95: {worst:.1f} ms (target: well under 100 ms)")
        with open(os.path.join(OUT, "console.json"), "w") as f:
            json.dump(results, f, indent=2)
    finally:
        if console:
            console.kill()
        pg.stop()


if __name__ == "__main__":
    main()
