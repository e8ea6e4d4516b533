#!/usr/bin/env python3
"""Issue #32: what the hot preset's AV1 and HEVC rungs cost and save beside the H.264 ladder.

Per source: an archive holding only that file, `ingestd reprocess ARCHIVE --cdn CDN` (default
preset), then `ingestd reprocess ARCHIVE --cdn CDN --preset hot` (both presets with maxBytes raised
to 1 GiB as in levers.py, written to $BENCH_OUT/hot/preset-*.json; adds av1-<rung>/ and hevc-<rung>/
beside the kept H.264 ladder), each under `perf record -e cpu-clock --inherit` (the job runs in a
child process). Then per rung of the hot version (<rung>/ = h264, av1-<rung>/, hevc-<rung>/):
  bytes    video packet bytes (ffprobe on the rung's index.m3u8)
  SSIM     "All" against the source brought to the rung's size and BT.709 (Benchmarks/levers.py's
           ssim(); none for HDR sources, which are tone mapped)
  CPU      CPU-seconds per video-second of the rung's threads from perf's per-thread samples:
           `rung <dir>` plus its encoder's `svt <rung>` / `x265 <rung>` in the hot step; for H.264
           `rung <rung>` + `x264 <rung>` in the default step (the hot step keeps those files)
and the whole-process CPU of both steps. Prints, per codec and rung, bytes x and dSSIM against the
same source's H.264 rung, CPU-s per video-second and CPU x against H.264 (median and worst over
sources), then every rung of `phone` (clean) and `camera` (grainy). "!" marks dSSIM < -0.002 (the
"no worse SSIM" rule). Every row goes to $BENCH_OUT/hot/bench.tsv; `bench.py --report` reprints it.

Sources: samples/*.mp4 and *.webm (not broken_truncated.mp4), ../shared/media/*.{mp4,mov,webm,avi}
that ffprobe can read (a source whose reprocess fails is skipped), and two 20 s 1080x1920 30 fps
camera originals made here: `camera` (grainy: levers.py's testsrc2 + temporal noise, x264 14 Mbit/s)
and `phone` (clean, real footage: ../shared/media/phone_android12_4k60_portrait_rot90_vfr.mp4, a
0.3 s Android 4K60 clip of a near-static wall, rotated to portrait, 30 fps (9 pictures), scaled to
1080x1920 (lanczos), played forward then backward and looped to 20 s, x264 CRF 12).

Environment: BENCH_OUT=bench-out  INGESTD_BIN=.build/release/ingestd  HOT_SOURCES=glob (file names)
Everything runs at nice 19.
"""
import fnmatch, glob, json, os, re, shutil, statistics, subprocess, sys, collections, time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from levers import ROOT, BIN, HZ, run, ffmpeg, ssim  # noqa: E402

OUT = os.path.join(os.environ.get("BENCH_OUT", os.path.join(ROOT, "bench-out")), "hot")
TSV = os.path.join(OUT, "bench.tsv")
MEDIA = os.path.join(ROOT, "../shared/media")
SLACK = -0.002
ENCODER = {"h264": "x264", "av1": "svt", "hevc": "x265"}
KEYS = ["source", "kind", "codec", "rung", "dir", "width", "height", "seconds", "bytes", "ssim", "cpu_per_s",
        "top", "default_cpu_per_s", "hot_cpu_per_s", "default_wall", "hot_wall"]

def make_sources():
    src = os.path.join(OUT, "bench-src")
    os.makedirs(src, exist_ok=True)
    camera, phone = os.path.join(src, "camera.mp4"), os.path.join(src, "phone.mp4")
    pattern = os.environ.get("HOT_SOURCES")
    wanted = lambda path: not pattern or fnmatch.fnmatch(os.path.basename(path), pattern)
    audio = ["-f", "lavfi", "-i", "sine=f=440:d=20:sample_rate=48000"]
    out = ["-c:a", "aac", "-b:a", "128k", "-ac", "2", "-color_primaries", "bt709", "-color_trc", "bt709", "-colorspace", "bt709"]
    if wanted(camera) and not os.path.exists(camera):  # levers.py's camera original, grainy
        ffmpeg("-f", "lavfi", "-i", "testsrc2=s=1080x1920:r=30:d=20", *audio, "-vf", "noise=alls=8:allf=t",
               "-c:v", "libx264", "-preset", "veryfast", "-profile:v", "high", "-x264-params", "keyint=60:min-keyint=60:scenecut=0",
               "-b:v", "14M", "-maxrate", "16M", "-bufsize", "16M", "-pix_fmt", "yuv420p", *out, camera)
    clip = os.path.join(MEDIA, "phone_android12_4k60_portrait_rot90_vfr.mp4")
    if wanted(phone) and not os.path.exists(phone) and os.path.exists(clip):  # clean real footage (ffmpeg applies the rotation)
        ffmpeg("-i", clip, *audio, "-filter_complex",
               "[0:v]fps=30,scale=1080:1920:flags=lanczos,format=yuv420p,split[a][b];[b]reverse[r];"
               "[a][r]concat=n=2:v=1:a=0,loop=loop=-1:size=32767,trim=end_frame=600,setpts=N/30/TB[v]",
               "-map", "[v]", "-map", "1:a", "-c:v", "libx264", "-preset", "medium", "-crf", "12", "-pix_fmt", "yuv420p",
               "-x264-params", "keyint=60:min-keyint=60:scenecut=0", *out, phone)
    found = [(p, name, kind) for p, name, kind in ((camera, "camera", "grainy"), (phone, "phone", "clean")) if os.path.exists(p)]
    samples = sorted(glob.glob(os.path.join(ROOT, "samples/*.mp4")) + glob.glob(os.path.join(ROOT, "samples/*.webm")))
    found += [(p, os.path.splitext(os.path.basename(p))[0], "sample") for p in samples if not p.endswith("broken_truncated.mp4")]
    media = sorted(p for p in glob.glob(os.path.join(MEDIA, "*")) if re.search(r"\.(mp4|mov|webm|avi)$", p))
    found += [(p, os.path.splitext(os.path.basename(p))[0], "media") for p in media if wanted(p) and has_video(p)]
    return [s for s in found if wanted(s[0])]

def has_video(path):
    r = run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=codec_type", "-of", "csv=p=0", path])
    return r.returncode == 0 and "video" in r.stdout

def preset_file(name):
    """The shipped preset with levers.py's one change: maxBytes 1 GiB (a 20 s CRF 12 original is over 50 MB)."""
    preset = json.loads(run([BIN, "preset", "--preset", name], cwd=ROOT).stdout)
    preset["limits"]["maxBytes"] = 1 << 30
    path = os.path.join(OUT, f"preset-{name}.json")
    with open(path, "w") as f:
        json.dump(preset, f)
    return path

def reprocess(archive, cdn, preset):
    """One reprocess under perf: (report item, CPU-seconds per thread name, wall seconds)."""
    data = cdn + f".{os.path.basename(preset)}.perf"
    started = time.monotonic()
    r = run(["perf", "record", "-q", "-e", "cpu-clock", "-F", str(HZ), "--inherit", "-o", data, "--",
             BIN, "reprocess", archive, "--cdn", cdn, "--preset", preset, "--json",
             "--job-timeout", "1800", "--job-memory-mb", "16384"])
    wall = time.monotonic() - started
    threads = collections.Counter(line.strip() for line in run(["perf", "script", "-F", "comm", "-i", data]).stdout.splitlines())
    os.remove(data)
    try:
        item = json.loads(r.stdout)["items"][0]
    except (ValueError, KeyError, IndexError):
        item = {"result": f"exit {r.returncode}: {r.stderr.strip()[-300:]}"}
    return item, {k: v / HZ for k, v in threads.items()}, wall

def video_bytes(playlist):
    r = run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "packet=size", "-of", "csv=p=0", playlist])
    return sum(int(line.split(",")[0]) for line in r.stdout.split() if line.split(",")[0].isdigit())

def matrix_of(video):  # as levers.py: the matrix the engine reads the source in
    space = video["colorSpace"]
    matrix = {"bt470bg": "bt601", "smpte170m": "bt601", "bt2020nc": "bt2020"}.get(space, space)
    if space in ("unknown", "unspecified", "reserved", ""):
        matrix = "bt709" if min(video["width"], video["height"]) >= 720 else "bt601"
    return matrix

def measure(path, name, kind):
    base = os.path.join(OUT, "bench-runs", name)
    shutil.rmtree(base, ignore_errors=True)
    archive, cdn = os.path.join(base, "archive"), os.path.join(base, "cdn")
    os.makedirs(archive), os.makedirs(cdn)
    shutil.copy(path, archive)
    default, default_cpu, default_wall = reprocess(archive, cdn, preset_file("default"))
    if default.get("result") != "published":
        print(f"skip {name}: default reprocess {default.get('error') or default.get('result')}", flush=True)
        return []
    hot, hot_cpu, hot_wall = reprocess(archive, cdn, preset_file("hot"))
    if hot.get("result") != "published":
        print(f"skip {name}: hot reprocess {hot.get('error') or hot.get('result')}", flush=True)
        return []
    manifest = json.load(open(os.path.join(hot["version"], "manifest.json")))
    seconds = manifest["durationSeconds"] or 1
    video = manifest["sources"][0]["video"]
    hdr = video["colorTransfer"] in ("arib-std-b67", "smpte2084")
    rows = []
    for rendition in manifest["renditions"]:
        directory, codec = rendition["name"], rendition["videoCodec"]
        rung = directory.split("-", 1)[1] if "-" in directory else directory
        cpu = default_cpu if codec == "h264" else hot_cpu
        playlist = os.path.join(hot["version"], rendition["playlist"])
        rows.append(dict(source=name, kind=kind, codec=codec, rung=rung, dir=directory, width=rendition["width"],
                         height=rendition["height"], seconds=seconds, bytes=video_bytes(playlist),
                         ssim=None if hdr else ssim(playlist, path, rendition["width"], rendition["height"], matrix_of(video)),
                         cpu_per_s=(cpu.get(f"rung {directory}", 0) + cpu.get(f"{ENCODER[codec]} {rung}", 0)) / seconds,
                         top=manifest["topRung"]["mode"], default_cpu_per_s=sum(default_cpu.values()) / seconds,
                         hot_cpu_per_s=sum(hot_cpu.values()) / seconds, default_wall=default_wall, hot_wall=hot_wall))
    return rows

def main():
    if not shutil.which("perf"):
        sys.exit("error: perf not found (Debian: linux-perf)")
    os.nice(max(0, 19 - os.nice(0)))
    rows = []
    for path, name, kind in make_sources():
        got = measure(path, name, kind)
        rows += got
        for row in got:
            print("\t".join(str(row[k]) for k in ("source", "dir", "bytes", "ssim", "cpu_per_s")), flush=True)
    if not rows:
        sys.exit("error: no source was measured")
    with open(TSV, "w") as f:
        f.write("\t".join(KEYS) + "\n")
        f.writelines("\t".join(str(row[k]) for k in KEYS) + "\n" for row in rows)
    report(rows)

def fmt(x, spec):
    return format(x, spec) if x is not None else "-"

def report(rows):
    h264 = {(r["source"], r["rung"]): r for r in rows if r["codec"] == "h264"}
    def against(r):  # (bytes x, dSSIM, CPU x) against the same source's H.264 rung
        b = h264.get((r["source"], r["rung"]))
        if not b:
            return None, None, None
        return (r["bytes"] / b["bytes"] if b["bytes"] else None,
                r["ssim"] - b["ssim"] if r["ssim"] is not None and b["ssim"] is not None else None,
                r["cpu_per_s"] / b["cpu_per_s"] if b["cpu_per_s"] > 0.005 else None)
    rungs = sorted({r["rung"] for r in rows}, key=lambda n: int(re.sub(r"\D", "", n) or 0))
    sources = sorted({r["source"] for r in rows})
    print(f"\nHot preset against the H.264 ladder, {len(sources)} sources (median / worst over sources; "
          f"CPU = rung + encoder threads, CPU-s per video-s; '!' = a source with dSSIM < {SLACK}):")
    print(f"{'codec':5} {'rung':6} {'n':>3} {'bytes x':>13} {'dSSIM':>17} {'CPU-s/s':>13} {'CPU x':>13}  fails")
    for codec in ("h264", "av1", "hevc"):
        for rung in rungs:
            group = [r for r in rows if r["codec"] == codec and r["rung"] == rung]
            if not group:
                continue
            pairs = [against(r) for r in group]
            ratio = sorted(p[0] for p in pairs if p[0] is not None)
            dssim = sorted(p[1] for p in pairs if p[1] is not None)
            cpux = sorted(p[2] for p in pairs if p[2] is not None)
            cpu = sorted(r["cpu_per_s"] for r in group)
            med = lambda xs: statistics.median(xs) if xs else None
            fails = sum(d < SLACK for d in dssim)
            print(f"{codec:5} {rung:6} {len(group):3} {fmt(med(ratio), '6.3f')} {fmt(max(ratio, default=None), '6.3f'):>6} "
                  f"{fmt(med(dssim), '+8.4f')} {fmt(min(dssim, default=None), '+8.4f'):>8} "
                  f"{fmt(med(cpu), '6.3f')} {fmt(max(cpu), '6.3f'):>6} {fmt(med(cpux), '6.2f')} {fmt(max(cpux, default=None), '6.2f'):>6}"
                  f"  {str(fails) + '!' if fails else ''}")
    for name, kind in (("phone", "clean"), ("camera", "grainy")):
        own = [r for r in rows if r["source"] == name]
        if not own:
            continue
        top = max(own, key=lambda r: r["height"])
        print(f"\n{name} ({kind}, {top['width']}x{top['height']} top, {top['seconds']:g} s, H.264 top rung: {top['top']}):")
        print(f"{'dir':11} {'size':>9} {'bytes':>10} {'bytes x':>7} {'SSIM':>7} {'dSSIM':>8} {'CPU-s/s':>7} {'CPU x':>6}")
        for r in sorted(own, key=lambda r: (["h264", "av1", "hevc"].index(r["codec"]), rungs.index(r["rung"]))):
            ratio, dssim, cpux = against(r)
            print(f"{r['dir']:11} {r['width']:>4}x{r['height']:<4} {r['bytes']:10,} {fmt(ratio, '7.3f')} {fmt(r['ssim'], '7.4f')} "
                  f"{fmt(dssim, '+8.4f')} {r['cpu_per_s']:7.3f} {fmt(cpux, '6.2f')}{' !' if dssim is not None and dssim < SLACK else ''}")
    steps = {r["source"]: r for r in rows}.values()
    hot = sum(r["hot_cpu_per_s"] * r["seconds"] for r in steps)
    default = sum(r["default_cpu_per_s"] * r["seconds"] for r in steps)
    video = sum(r["seconds"] for r in steps)
    per = sorted(r["hot_cpu_per_s"] / r["default_cpu_per_s"] for r in steps if r["default_cpu_per_s"])
    print(f"\nWhole process (perf, every thread of reprocess and its job), over {video:g} video-s: hot step "
          f"{hot / video:.2f} CPU-s/s, default step {default / video:.2f} CPU-s/s: {hot / default:.2f}x "
          f"(per source median {statistics.median(per):.2f}x, {per[0]:.2f}x-{per[-1]:.2f}x)")
    for name in ("phone", "camera"):
        r = next((r for r in steps if r["source"] == name), None)
        if r:
            print(f"  {name}: hot {r['hot_cpu_per_s']:.2f} CPU-s/s ({r['hot_wall']:.0f} s wall), "
                  f"default {r['default_cpu_per_s']:.2f} CPU-s/s ({r['default_wall']:.0f} s wall): "
                  f"{r['hot_cpu_per_s'] / r['default_cpu_per_s']:.2f}x")

def load():
    lines = open(TSV).read().splitlines()
    keys = lines[0].split("\t")
    text = ("source", "kind", "codec", "rung", "dir", "top")
    parse = lambda k, v: v if k in text else (None if v == "None" else int(v) if k in ("bytes", "width", "height") else float(v))
    return [{k: parse(k, v) for k, v in zip(keys, line.split("\t"))} for line in lines[1:]]

if __name__ == "__main__":
    report(load()) if sys.argv[1:] == ["--report"] else main()
