#!/usr/bin/env python3
"""Fuzz harness for the daemon's real path.

Mutates the sample media deterministically (per --seed): bit flips, truncation, splices of two
files, and MP4 box-length corruption. One mutant in four is an upload directory (samples/upload)
with a mutated clip, a mutated music track, or a hostile upload.json (bit flips, paths out of the
directory, absurd trims and gains, wrong types, unknown fields, deep nesting). Drops every mutant
into the spool of a real `ingestd watch` process and checks the promises operators rely on:

  * the daemon stays up;
  * every upload ends exactly once in archive/, rejected/ or failed/ (the latter two with
    reason.json), and nothing is left in incoming/ or work/;
  * every published upload is playable (ffprobe decodes its lowest rung);
  * nothing appears in the CDN for an upload that was not published, and no staging is left;
  * no job outlives its timeout.

Prints a summary and exits non-zero on any violation. Regression samples (inputs that once broke
something) live in Tests/fuzz/regressions/ and are always included.
"""
import argparse, json, os, random, shutil, signal, subprocess, sys, tempfile, time

SAMPLES = ["portrait_rotated.mp4", "landscape_60fps.mp4", "hdr_hlg.mp4", "noaudio_odd.webm"]


def mp4_boxes(data):
    """Offsets of plausible top-level and nested box headers (size + 4-letter type)."""
    found = []
    for i in range(0, len(data) - 8):
        kind = data[i + 4:i + 8]
        if kind in (b"moov", b"trak", b"mdia", b"minf", b"stbl", b"stsz", b"stco", b"co64", b"stts",
                    b"stsc", b"stss", b"mdat", b"avcC", b"hvcC", b"esds", b"tkhd", b"mdhd", b"mvhd", b"elst"):
            found.append(i)
    return found


def mutate(rng, data, other):
    kind = rng.choice(["flip", "flip", "truncate", "splice", "box"])
    out = bytearray(data)
    if kind == "flip":
        for _ in range(rng.randint(1, 64)):
            out[rng.randrange(len(out))] ^= 1 << rng.randrange(8)
    elif kind == "truncate":
        out = out[:rng.randrange(64, max(65, len(out)))]
    elif kind == "splice":
        cut = rng.randrange(len(out))
        start = rng.randrange(len(other))
        out = out[:cut] + other[start:start + rng.randrange(1, len(other) - start + 1)]
    else:
        boxes = mp4_boxes(out)
        if boxes:
            at = rng.choice(boxes)
            value = rng.choice([0, 1, 7, 8, 0xFFFFFFFF, rng.randrange(1 << 32), len(out) * 4])
            out[at:at + 4] = value.to_bytes(4, "big")
        else:
            out[rng.randrange(len(out))] ^= 0xFF
    return kind, bytes(out)


HOSTILE_VALUES = ["../clip1.mp4", "/etc/passwd", "clip1.mp4/..", "", ".", "upload.json", "missing.mp4",
                  -1, 0, 1e308, -1e308, "NaN", None, True, [], {}, "x" * 5000]


def mutate_manifest(rng, text):
    """A hostile variant of upload.json: raw bit flips, or one field set to something absurd."""
    kind = rng.choice(["json-flip", "json-field", "json-field", "json-shape"])
    if kind == "json-flip":
        data = bytearray(text.encode())
        for _ in range(rng.randint(1, 8)):
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        return kind, bytes(data)
    manifest = json.loads(text)
    if kind == "json-field":
        clip = rng.choice(manifest["clips"])
        target, key = rng.choice([(clip, "file"), (clip, "start"), (clip, "end"), (manifest["audio"], "file"),
                                  (manifest["audio"], "offset"), (manifest["audio"], "musicGain"),
                                  (manifest["audio"], "mode"), (manifest, "id")])
        target[key] = rng.choice(HOSTILE_VALUES)
    else:
        choice = rng.randrange(4)
        if choice == 0:
            manifest["clips"] = manifest["clips"] * rng.choice([0, 7, 40])
        elif choice == 1:
            manifest["metadata"] = json.loads("[" * 3000 + "]" * 3000)
        elif choice == 2:
            manifest[rng.choice(["extra", "clipz", "Audio"])] = 1
        else:
            del manifest[rng.choice(["id", "clips", "audio"])]
    return kind, json.dumps(manifest).encode()


def mutate_upload(rng, files, originals):
    """An upload directory (name → bytes) with one file mutated."""
    files = dict(files)
    target = rng.choice(["upload.json", "upload.json", "clip1.mp4", "clip2.mp4", "clip3.webm", "music.ogg"])
    if target == "upload.json":
        kind, files[target] = mutate_manifest(rng, files[target].decode())
    else:
        kind, files[target] = mutate(rng, files[target], originals[rng.choice(SAMPLES)])
    return f"{kind}-{target.replace('.', '_')}", files


def write_upload(path, data):
    """Writes a file (bytes) or an upload directory (name → bytes) at path."""
    if isinstance(data, dict):
        os.makedirs(path)
        for name, body in data.items():
            open(os.path.join(path, name), "wb").write(body)
    else:
        open(path, "wb").write(data)


def entries(path):
    try:
        return sorted(os.listdir(path))
    except FileNotFoundError:
        return []


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--count", type=int, default=40, help="mutants to generate")
    parser.add_argument("--binary", default=".build/debug/ingestd")
    parser.add_argument("--samples", default="samples")
    parser.add_argument("--job-timeout", type=float, default=60)
    parser.add_argument("--deadline", type=float, default=1200, help="seconds for the whole run")
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    parser.add_argument("--emit", metavar="DIR", help="only write the mutants into DIR and exit")
    args = parser.parse_args()

    rng = random.Random(args.seed)
    work = tempfile.mkdtemp(prefix=f"ingestd-fuzz-{args.seed}-")
    spool, cdn = os.path.join(work, "spool"), os.path.join(work, "cdn")
    os.makedirs(os.path.join(spool, "incoming"))
    os.makedirs(cdn)
    originals = {name: open(os.path.join(args.samples, name), "rb").read() for name in SAMPLES}
    here = os.path.dirname(os.path.abspath(__file__))
    regressions = os.path.join(here, "regressions")

    upload_dir = os.path.join(args.samples, "upload")
    upload = {name: open(os.path.join(upload_dir, name), "rb").read() for name in entries(upload_dir)}
    inputs = []
    for index in range(args.count):
        if index % 4 == 3 and upload:
            kind, files = mutate_upload(rng, upload, originals)
            inputs.append((f"u{index:04d}-{kind}", files))
            continue
        base = rng.choice(SAMPLES)
        other = originals[rng.choice(SAMPLES)]
        kind, data = mutate(rng, originals[base], other)
        inputs.append((f"m{index:04d}-{kind}-{base}", data))
    for name in entries(regressions):
        inputs.append((f"regression-{name}", open(os.path.join(regressions, name), "rb").read()))

    if args.emit:
        os.makedirs(args.emit, exist_ok=True)
        for name, data in inputs:
            write_upload(os.path.join(args.emit, name), data)
        shutil.rmtree(work, ignore_errors=True)
        return

    daemon = subprocess.Popen([args.binary, "watch", "--spool", spool, "--cdn", cdn, "--jobs", "2",
                               "--max-attempts", "1", "--job-timeout", str(args.job_timeout), "--settle", "0.5"],
                              stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "daemon.log"), "w"))
    failures = []
    try:
        for name, data in inputs:
            hidden = os.path.join(spool, "incoming", "." + name + ".part")
            write_upload(hidden, data)
            os.rename(hidden, os.path.join(spool, "incoming", name))
        start = time.time()
        while True:
            ended = sum(len(entries(os.path.join(spool, s))) for s in ("archive", "rejected", "failed"))
            if ended >= len(inputs) and not entries(os.path.join(spool, "work")):
                break
            if daemon.poll() is not None:
                failures.append(f"daemon exited with status {daemon.returncode}")
                break
            if time.time() - start > args.deadline:
                failures.append(f"not settled after {args.deadline} s: {ended}/{len(inputs)} ended")
                break
            time.sleep(0.3)
        if daemon.poll() is not None and not failures:
            failures.append("daemon died")
        # Stopped as an operator would (SIGTERM) before the checks, so that what it writes while
        # it runs (metrics.prom through its temporary) is not taken for a leak.
        if daemon.poll() is None:
            daemon.send_signal(signal.SIGTERM)
            try:
                if daemon.wait(timeout=30) != 0:
                    failures.append(f"daemon exited with status {daemon.returncode} on SIGTERM")
            except subprocess.TimeoutExpired:
                failures.append("daemon still running 30 s after SIGTERM")

        counts = {}
        for state in ("archive", "rejected", "failed"):
            for job in entries(os.path.join(spool, state)):
                counts[state] = counts.get(state, 0) + 1
                directory = os.path.join(spool, state, job)
                originals_left = entries(os.path.join(directory, "upload"))
                if len(originals_left) != 1:
                    failures.append(f"{state}/{job}: original missing ({entries(directory)})")
                if state == "archive":
                    playlist = os.path.join(cdn, job, "master.m3u8")
                    manifest = json.load(open(os.path.join(cdn, job, "manifest.json")))
                    lowest = os.path.join(cdn, job, manifest["renditions"][0]["playlist"])
                    probe = subprocess.run(["ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0",
                                            "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0", lowest],
                                           capture_output=True, text=True)
                    if not os.path.exists(playlist) or probe.returncode != 0 or int((probe.stdout.split() or ["0"])[0]) <= 0:
                        failures.append(f"published {job} is not playable: {probe.stderr.strip()[:200]}")
                else:
                    reason = os.path.join(directory, "reason.json")
                    if not os.path.exists(reason):
                        failures.append(f"{state}/{job}: no reason.json")
                    else:
                        body = json.load(open(reason))
                        counts[f"{state}:{body['code']}"] = counts.get(f"{state}:{body['code']}", 0) + 1
                        if body["code"] == "timeout" and state == "failed":
                            counts["timeouts"] = counts.get("timeouts", 0) + 1
                    if os.path.exists(os.path.join(cdn, job)):
                        failures.append(f"{state}/{job}: output exists in the CDN")
        for leftover in ("incoming", "work"):
            if entries(os.path.join(spool, leftover)):
                failures.append(f"{leftover}/ not empty: {entries(os.path.join(spool, leftover))[:5]}")
        # No temporary files left behind (atomic JSON writes use NAME.tmp-PID, staging is hidden).
        leaks = [os.path.join(d, f) for base in (spool, cdn) for d, _, files in os.walk(base) for f in files if ".tmp-" in f]
        if leaks:
            failures.append(f"temporary files left: {leaks[:5]}")
        # No job outlives its timeout: an attempt's start → its end within the timeout (plus slack for
        # the input's preparation, the 5 s from SIGTERM to SIGKILL and the filing's fsyncs, which a
        # loaded host stretches: a hang guard, not a timing bound).
        from datetime import datetime
        claimed, ended = {}, {}
        for line in open(os.path.join(spool, "events.ndjson")):
            event = json.loads(line)
            when = datetime.fromisoformat(event["time"].replace("Z", "+00:00"))
            if event["event"] == "attempt":
                claimed[event["id"]] = when
            elif event["event"] in ("published", "rejected", "failed", "retry"):
                ended[event["id"]] = when
        slowest = max(((ended[i] - claimed[i]).total_seconds() for i in ended if i in claimed), default=0)
        counts["slowest_job_seconds"] = round(slowest, 1)
        if slowest > args.job_timeout + 30:
            failures.append(f"a job ran {slowest:.0f} s, past the {args.job_timeout:.0f} s timeout")
        staging = [n for n in entries(cdn) if n.startswith(".")]
        if staging:
            failures.append(f"staging left in the CDN: {staging[:5]}")
        total = sum(counts.get(state, 0) for state in ("archive", "rejected", "failed"))
        if total != len(inputs):
            failures.append(f"{total} uploads ended, {len(inputs)} were dropped")
        print(json.dumps({"seed": args.seed, "inputs": len(inputs), "counts": counts, "failures": failures}, sort_keys=True))
    finally:
        if daemon.poll() is None:
            daemon.send_signal(signal.SIGKILL)
        daemon.wait()
        if not args.keep and not failures:
            shutil.rmtree(work, ignore_errors=True)
        elif failures:
            print(f"work directory kept: {work}", file=sys.stderr)
    if failures:
        print(f"{len(inputs) - len(failures)} passed, {len(failures)} failed", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
