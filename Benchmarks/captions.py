#!/usr/bin/env python3
"""make bench-captions (issue #68): what an upload's caption tracks cost its time to playable.

  captions.py BIN OUT_DIR [ROUNDS]

One `ingestd watch` (the video grows in view) and two upload directories made of the same 30 s
app clip (playable.py's): one whose upload.json names two caption tracks (English for the
whole video and French on the clip, 60 cues each), one without. They are dropped one at a time,
alternating (the order turned each round: both meet the same host), ROUNDS pairs (default 8).
Per kind: time from the upload's rename into incoming/ to its master.m3u8, and to its
manifest.json (the whole ladder), p50 and p95; the ratio of the medians, captions / none.
Also the daemon's own split of each (its `playable` event's stages). Writes OUT_DIR/captions.json.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, HERE)
import playable  # noqa: E402


def track(seconds, cues, words):
    lines = ["WEBVTT", ""]
    for index in range(cues):
        start = index * seconds / cues
        stamp = lambda s: f"00:{int(s) // 60:02d}:{s % 60:06.3f}"
        lines += [f"{stamp(start)} --> {stamp(start + seconds / cues * 0.9)}", f"<i>{words}</i> {index}", ""]
    return "\n".join(lines)


def upload(directory, clip, captions):
    os.makedirs(directory, exist_ok=True)
    shutil.copy(clip, os.path.join(directory, "clip.mp4"))
    manifest = {"id": os.path.basename(directory), "clips": [{"file": "clip.mp4"}]}
    if captions:
        with open(os.path.join(directory, "en.vtt"), "w") as f:
            f.write(track(30, 60, "the words of the whole video"))
        with open(os.path.join(directory, "fr.vtt"), "w") as f:
            f.write(track(30, 60, "les mots du clip"))
        manifest["captions"] = [{"file": "en.vtt", "language": "en"}]
        manifest["clips"][0]["captions"] = [{"file": "fr.vtt", "language": "fr"}]
    with open(os.path.join(directory, "upload.json"), "w") as f:
        json.dump(manifest, f)
    return directory


def main():
    binary, out = sys.argv[1], os.path.abspath(sys.argv[2])
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 8
    os.makedirs(out, exist_ok=True)
    clip = playable.generate(os.path.join(out, "app_30s.mp4"), "app", 30)
    work = tempfile.mkdtemp(prefix="bench-captions-")
    sources = {kind: upload(os.path.join(work, "sources", kind), clip, kind == "captions") for kind in ("captions", "none")}
    spool, cdn = os.path.join(work, "spool"), os.path.join(work, "cdn")
    os.makedirs(os.path.join(spool, "incoming"))
    os.makedirs(cdn)
    daemon = subprocess.Popen([binary, "watch", "--spool", spool, "--cdn", cdn, "--jobs", "1"], stderr=subprocess.DEVNULL)
    time.sleep(1)
    samples = {"captions": [], "none": []}
    try:
        for index in range(rounds):
            for kind in (("captions", "none") if index % 2 == 0 else ("none", "captions")):
                name = f"{kind}{index}"
                hidden = os.path.join(spool, "incoming", f".{name}.part")
                shutil.copytree(sources[kind], hidden)
                arrived = time.monotonic()
                os.rename(hidden, os.path.join(spool, "incoming", name))
                pending = [[kind, 30, name, arrived, None, None]]
                playable.wait(cdn, pending)
                samples[kind].append((pending[0][4] - arrived, pending[0][5] - arrived))
                directory = playable.video_dir(cdn, name)
                with open(os.path.join(directory, "manifest.json")) as f:
                    found = len(json.load(f).get("captions") or [])
                if found != (2 if kind == "captions" else 0):
                    raise SystemExit(f"{name}: {found} caption tracks published")
        split = playable.stages(os.path.join(spool, "events.ndjson"))
    finally:
        daemon.terminate()
        daemon.wait()
        shutil.rmtree(work, ignore_errors=True)
    report = {}
    for kind, values in samples.items():
        report[kind] = {measure: {"p50": round(playable.percentile([v[i] for v in values], 0.5), 3),
                                  "p95": round(playable.percentile([v[i] for v in values], 0.95), 3)}
                        for i, measure in enumerate(("toPlayable", "toWhole"))}
    for kind in samples:  # the daemon's own split of each time to playable (its `playable` event)
        owns = [own for name, own in split.items() if name.rstrip("0123456789") == kind]
        report[kind]["stages"] = {stage: round(playable.percentile([o.get(stage, 0) for o in owns], 0.5), 3)
                                  for stage in playable.STAGES[1:]}
    report["ratio"] = {measure: round(report["captions"][measure]["p50"] / report["none"][measure]["p50"], 4)
                       for measure in ("toPlayable", "toWhole")}
    with open(os.path.join(out, "captions.json"), "w") as f:
        json.dump(report, f, indent=1)
    print(f"{'upload':<10} {'measure':<12} {'p50 s':>7} {'p95 s':>7}")
    for kind in ("none", "captions"):
        for measure in ("toPlayable", "toWhole"):
            print(f"{kind:<10} {measure:<12} {report[kind][measure]['p50']:7.3f} {report[kind][measure]['p95']:7.3f}")
    print("stages, p50 s: " + "; ".join(f"{kind} " + ", ".join(f"{k} {v:.3f}" for k, v in report[kind]["stages"].items())
                                       for kind in ("none", "captions")))
    print("captions / none, p50: " + ", ".join(f"{m} x{r:.3f}" for m, r in report["ratio"].items()))


if __name__ == "__main__":
    main()
