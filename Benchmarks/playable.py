#!/usr/bin/env python3
"""Time to playable (#41): from an upload's arrival (its atomic rename into incoming/) to the moment
`CDN/<id>/master.m3u8` exists, for `ingestd watch` (the video grows in view) side by side with
`ingestd watch --hold` (today's: the master appears with the whole ladder), one upload at a time
and with a queue, per upload kind and length; the time to the whole ladder; and the CPU per video
of both daemons (job processes included). The modes alternate within each round, in an order that
turns round by round, and the CPU figure is the median of each round's ratio to `--hold`.

  playable.py BIN OUT_DIR ROUNDS [--baseline OTHER_BIN]

`--baseline`: another build's `watch` runs as a third mode (`baseline`), alternated the same way.
Prints a table and writes OUT_DIR/playable.tsv (kind, mode, queue, measure, p50, p95, max).
"""
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def generate(path, kind, seconds):
    """An app upload (H.264 High@4.0 3 Mbit/s, an IDR every second: its top rung passed through)
    or a camera original (12 Mbit/s, an IDR every 2 s, rotated: every rung encoded)."""
    if os.path.exists(path):
        return path
    source = ["-f", "lavfi", "-i", f"testsrc2=s=1080x1920:r=30:d={seconds}",
              "-f", "lavfi", "-i", f"sine=f=440:d={seconds}:sample_rate=48000"]
    if kind == "app":
        video = ["-c:v", "libx264", "-preset", "veryfast", "-profile:v", "high", "-level", "4.0", "-pix_fmt", "yuv420p",
                 "-x264-params", "keyint=30:min-keyint=30:scenecut=0", "-b:v", "2500k", "-maxrate", "3000k",
                 "-bufsize", "1500k", "-color_primaries", "bt709", "-color_trc", "bt709", "-colorspace", "bt709"]
    else:
        source[3] = f"testsrc2=s=1920x1080:r=30:d={seconds}"
        video = ["-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p", "-g", "60", "-b:v", "12000k",
                 "-metadata:s:v:0", "rotate=90"]
    subprocess.run(["ffmpeg", "-v", "error", "-y"] + source + video + ["-c:a", "aac", "-b:a", "128k", path], check=True)
    return path


def video_dir(cdn, name):
    for entry in os.listdir(cdn):
        if entry.startswith(f"{name}-"):
            return os.path.join(cdn, entry)
    return None


def run(binary, uploads, hold, queue):
    """Starts a daemon, drops `uploads` (one at a time, or all at once with `queue`), and returns
    [(kind, seconds, to_playable, to_whole, stages)] and the CPU seconds it used, job processes
    included. `stages`: the daemon's own split of the time to playable (its `playable` event), and
    `detect`, the rest (the rename noticed, and this script's 5 ms polling)."""
    base = tempfile.mkdtemp(prefix="bench-playable-")
    spool, cdn = os.path.join(base, "spool"), os.path.join(base, "cdn")
    os.makedirs(os.path.join(spool, "incoming"))
    os.makedirs(cdn)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    daemon = subprocess.Popen([binary, "watch", "--spool", spool, "--cdn", cdn] + (["--hold"] if hold else []),
                              stderr=subprocess.DEVNULL)
    time.sleep(1)
    results = []
    try:
        pending = []
        for index, (kind, seconds, path) in enumerate(uploads):
            name = f"u{index}"
            hidden = os.path.join(spool, "incoming", f".{name}.part")
            shutil.copy(path, hidden)
            arrived = time.monotonic()
            os.rename(hidden, os.path.join(spool, "incoming", f"{name}.mp4"))
            pending.append([kind, seconds, name, arrived, None, None])
            if not queue:
                wait(cdn, pending)
        wait(cdn, pending)
        time.sleep(0.2)
        split = stages(os.path.join(spool, "events.ndjson"))
        for kind, seconds, name, arrived, playable, whole in pending:
            own = split.get(name)
            if own is not None:
                own["detect"] = round(playable - arrived - sum(own.values()), 3)
            results.append((kind, seconds, playable - arrived, whole - arrived, own))
    finally:
        daemon.terminate()
        daemon.wait()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        shutil.rmtree(base, ignore_errors=True)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return results, cpu


STAGES = ["detect", "toJobProcess", "probe", "firstSegments", "show"]


def stages(events):
    """Each upload's stages before playable, by its name (`u0`), from the daemon's events."""
    split = {}
    with open(events) as f:
        for line in f:
            event = json.loads(line)
            if event.get("event") == "playable" and "stages" in event:
                split[event["id"].rsplit("-", 1)[0]] = dict(event["stages"])
    return split


def wait(cdn, pending, timeout=600):
    """Polls every 5 ms until every pending upload is whole, noting when its master appeared."""
    deadline = time.monotonic() + timeout
    while any(p[5] is None for p in pending):
        if time.monotonic() > deadline:
            raise SystemExit("timed out waiting for the uploads")
        now = time.monotonic()
        for p in pending:
            if p[5] is not None:
                continue
            directory = video_dir(cdn, p[2])
            if directory is None:
                continue
            if p[4] is None and os.path.exists(os.path.join(directory, "master.m3u8")):
                p[4] = now
            if os.path.exists(os.path.join(directory, "manifest.json")):
                p[5] = now
                p[4] = p[4] or now
        time.sleep(0.005)


def percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def main():
    args = sys.argv[1:]
    baseline = None
    if "--baseline" in args:
        at = args.index("--baseline")
        baseline, args = args[at + 1], args[:at] + args[at + 2:]
    binary, out, rounds = args[0], args[1], int(args[2])
    os.makedirs(out, exist_ok=True)
    media = os.path.join(out, "media")
    os.makedirs(media, exist_ok=True)
    kinds = [("app", 15), ("app", 30), ("app", 60), ("camera", 20)]
    files = {(k, s): generate(os.path.join(media, f"{k}_{s}s.mp4"), k, s) for k, s in kinds}
    # (mode, binary, hold): `baseline` is another build's growing mode, beside this one's.
    modes = [("growing", binary, False), ("hold", binary, True)] + ([("baseline", baseline, False)] if baseline else [])
    samples, split = {}, {}
    cpu = {mode: [] for mode, _, _ in modes}  # per round: CPU seconds per video
    # The modes alternate, their order turned each round: this VM's CPU speed drifts by 15 % over
    # minutes, so modes run in blocks would measure the drift, not the mode.
    for index in range(rounds + 1):
        queue = index == rounds  # the last round: the four kinds dropped at once (one job at a time)
        for mode, bin_, hold in modes[index % len(modes):] + modes[:index % len(modes)]:
            results, used = run(bin_, [(k, s, files[(k, s)]) for k, s in kinds], hold, queue=queue)
            if not queue:
                cpu[mode].append(used / len(results))
            for kind, seconds, playable, whole, own in results:
                samples.setdefault((f"{kind} {seconds}s", mode, "queued" if queue else "alone"), []).append((playable, whole))
                if own and not queue and mode != "hold":
                    split.setdefault((f"{kind} {seconds}s", mode), []).append(own)
    rows = []
    for (case, mode, queue), values in sorted(samples.items()):
        for measure, index in (("to playable s", 0), ("to whole ladder s", 1)):
            xs = [v[index] for v in values]
            rows.append((case, mode, queue, measure, percentile(xs, 0.5), percentile(xs, 0.95), max(xs)))
    # Each round's ratio pairs runs minutes apart; their median is the figure.
    ratios = {mode: statistics.median(a / b for a, b in zip(cpu[mode], cpu["hold"])) for mode in cpu if mode != "hold"}
    with open(os.path.join(out, "playable.tsv"), "w") as f:
        for row in rows:
            f.write("\t".join(str(x) for x in row) + "\n")
        for mode, values in cpu.items():
            f.write(f"cpu per video s\t{mode}\t\t\t{statistics.median(values):.3f}\n")
        for mode, ratio in ratios.items():
            f.write(f"cpu per video / hold, paired median\t{mode}\t\t\t{ratio:.4f}\n")
        for (case, mode), owns in sorted(split.items()):
            for stage in STAGES:
                f.write(f"{case}\t{mode}\talone\tstage {stage} s\t{percentile([o.get(stage, 0) for o in owns], 0.5):.3f}\n")
    print(f"{'upload':<12} {'mode':<8} {'queue':<7} {'measure':<18} {'p50':>6} {'p95':>6} {'max':>6}")
    for case, mode, queue, measure, p50, p95, top in rows:
        print(f"{case:<12} {mode:<8} {queue:<7} {measure:<18} {p50:6.2f} {p95:6.2f} {top:6.2f}")
    print("CPU per video, each round (s): " + "; ".join(f"{mode} " + " ".join(f"{v:.2f}" for v in values) for mode, values in cpu.items()))
    print("CPU per video against --hold, the median of each round's ratio: "
          + ", ".join(f"{mode} x{ratio:.3f}" for mode, ratio in ratios.items()))
    print("\nTime to playable by stage (one at a time), p50 s:")
    print(f"{'upload':<12} {'mode':<8} " + " ".join(f"{s:>13}" for s in STAGES))
    for (case, mode), owns in sorted(split.items()):
        print(f"{case:<12} {mode:<8} " + " ".join(f"{percentile([o.get(s, 0) for o in owns], 0.5):13.3f}" for s in STAGES))


if __name__ == "__main__":
    main()
