#!/usr/bin/env python3
"""Issue #33: the x264 levers, per rung, over the shipped samples, ../shared/media and the
synthetic camera originals. For each source and each variant of the default preset, one
`ingestd transcode` under `perf record -e cpu-clock` (CPU per thread: libx264's threads are
named `x264 <rung>`, each rung's own thread `rung <rung>`, the decode/filter thread `transcode`),
then per rung: bytes (segments), SSIM against the source brought to the rung's size and BT.709
by the ffmpeg CLI, and CPU-seconds per video-second. Prints one table per variant as the
difference from `base`, and writes every row to $BENCH_OUT/levers/levers.tsv.

Variants are changes to the default preset (`base`). A single-threaded H.264 decoder was measured
the same way (0.96-1.02x the CPU; 1.00x the wall against the CLI in farm-bench) and dropped.

Environment: BENCH_OUT=bench-out  INGESTD_BIN=.build/release/ingestd
             LEVERS="base b-adapt0 ..." (default: all)  LEVER_SOURCES=glob (default: all)
"""
import fnmatch, glob, json, os, re, shutil, subprocess, sys, collections

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(os.environ.get("BENCH_OUT", os.path.join(ROOT, "bench-out")), "levers")
BIN = os.environ.get("INGESTD_BIN", os.path.join(ROOT, ".build/release/ingestd"))
HZ = 250

def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, **kw)

def ffmpeg(*args):
    r = run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-y", *args])
    if r.returncode:
        sys.exit(f"ffmpeg {' '.join(args)}: {r.stderr}")

def sources():
    os.makedirs(OUT, exist_ok=True)
    camera = os.path.join(OUT, "camera.mp4")
    grain = ["-f", "lavfi", "-i", "testsrc2=s=1080x1920:r=30:d=20", "-f", "lavfi", "-i", "sine=f=440:d=20:sample_rate=48000",
             "-c:v", "libx264", "-preset", "veryfast", "-profile:v", "high", "-x264-params", "keyint=60:min-keyint=60:scenecut=0",
             "-b:v", "14M", "-maxrate", "16M", "-bufsize", "16M", "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "128k", "-ac", "2"]
    if not os.path.exists(camera):  # as Benchmarks/passthrough.sh's camera original
        ffmpeg(*grain[:8], "-vf", "noise=alls=8:allf=t", *grain[8:], "-color_primaries", "bt709", "-color_trc", "bt709",
               "-colorspace", "bt709", camera)
    camera601 = os.path.join(OUT, "camera_bt601.mp4")
    if not os.path.exists(camera601):  # the same pixels in BT.601, tagged so
        ffmpeg(*grain[:8], "-vf", "noise=alls=8:allf=t,scale=out_color_matrix=bt601:out_range=tv", *grain[8:],
               "-color_primaries", "smpte170m", "-color_trc", "smpte170m", "-colorspace", "smpte170m", camera601)
    found = [camera, camera601] + sorted(glob.glob(os.path.join(ROOT, "samples/*.mp4")) + glob.glob(os.path.join(ROOT, "samples/*.webm")))
    found += sorted(p for p in glob.glob(os.path.join(ROOT, "../shared/media/*")) if re.search(r"\.(mp4|mov|webm|avi)$", p))
    pattern = os.environ.get("LEVER_SOURCES")
    return [p for p in found if not pattern or fnmatch.fnmatch(os.path.basename(p), pattern)]

def preset(change):
    p = json.loads(run([BIN, "preset"]).stdout)
    p["limits"]["maxBytes"] = 1 << 30
    p["video"]["passthrough"] = False  # every rung compares encoder settings, never a copy
    change(p)
    return p

def rungs(p, names, **values):
    for r in p["rungs"]:
        if r["name"] in names:
            for key, value in values.items():
                if key == "x264Params" and r.get(key):
                    value = r[key] + ":" + value
                r[key] = value

ALL = ["234p", "360p", "720p", "1080p"]
SMALL = ["234p", "360p"]
VARIANTS = collections.OrderedDict([
    ("base", (lambda p: None, {})),
    ("b-adapt0", (lambda p: rungs(p, ALL, x264Params="b-adapt=0"), {})),
    ("lookahead10", (lambda p: rungs(p, ALL, x264Params="rc-lookahead=10"), {})),
    ("lookahead5", (lambda p: rungs(p, ALL, x264Params="rc-lookahead=5"), {})),
    ("b-adapt0+lookahead10", (lambda p: rungs(p, ALL, x264Params="b-adapt=0:rc-lookahead=10"), {})),
    ("small-faster", (lambda p: rungs(p, SMALL, encoderPreset="faster"), {})),
    ("small-fast", (lambda p: rungs(p, SMALL, encoderPreset="fast"), {})),
    ("small-medium", (lambda p: rungs(p, SMALL, encoderPreset="medium"), {})),
    ("top-superfast", (lambda p: rungs(p, ["1080p"], encoderPreset="superfast"), {})),
])

def transcode(source, name, variant):
    change, env = VARIANTS[variant]
    directory = os.path.join(OUT, "runs", name, variant)
    shutil.rmtree(directory, ignore_errors=True)
    os.makedirs(os.path.dirname(directory), exist_ok=True)
    preset_path = os.path.join(OUT, f"preset-{variant}.json")
    with open(preset_path, "w") as f:
        json.dump(preset(change), f)
    perf_data = directory + ".perf"
    r = run(["perf", "record", "-q", "-e", "cpu-clock", "-F", str(HZ), "-o", perf_data, "--",
             BIN, "transcode", source, "--out", directory, "--preset", preset_path, "--no-progress", "--json"],
            env={**os.environ, **env})
    if r.returncode:
        return None
    threads = collections.Counter()
    for line in run(["perf", "script", "-F", "comm", "-i", perf_data]).stdout.splitlines():
        threads[line.strip()] += 1
    os.remove(perf_data)
    return directory, {k: v / HZ for k, v in threads.items()}

def ssim(rung_playlist, source, width, height, matrix):
    convert = f",scale=in_color_matrix={matrix}:out_color_matrix=bt709" if matrix != "bt709" else ""
    r = run(["ffmpeg", "-hide_banner", "-nostats", "-i", rung_playlist, "-i", source, "-lavfi",
             f"[1:v]fps=30,scale=w={width}:h={height}:flags=bicubic{convert},format=yuv420p[ref];[0:v]format=yuv420p[out];[out][ref]ssim",
             "-f", "null", "-"])
    found = re.findall(r"All:([0-9.]+)", r.stderr)
    return float(found[-1]) if found else None

def measure(source, variant):
    name = os.path.splitext(os.path.basename(source))[0]
    done = transcode(source, name, variant)
    if done is None:
        return []
    directory, cpu = done
    manifest = json.load(open(os.path.join(directory, "manifest.json")))
    seconds = manifest["durationSeconds"] or 1
    video = manifest["sources"][0]["video"]
    # The matrix the engine reads the source in (VideoStreamInfo.effectiveColorMatrix); HDR is tone
    # mapped, which no SSIM against the source measures.
    space = video["colorSpace"]
    matrix = {"bt470bg": "bt601", "smpte170m": "bt601", "bt2020nc": "bt2020"}.get(space, space)
    if space in ("unknown", "unspecified", "reserved", ""):
        matrix = "bt709" if min(video["width"], video["height"]) >= 720 else "bt601"
    hdr = video["colorTransfer"] in ("arib-std-b67", "smpte2084")
    rows = []
    for rendition in manifest["renditions"]:
        rung = rendition["name"]
        folder = os.path.join(directory, rung)
        size = sum(os.path.getsize(p) for p in glob.glob(os.path.join(folder, "*.m4s")))
        quality = None if hdr else ssim(os.path.join(folder, "index.m3u8"), source, rendition["width"], rendition["height"], matrix)
        rung_cpu = cpu.get(f"x264 {rung}", 0) + cpu.get(f"rung {rung}", 0)
        rows.append(dict(source=name, variant=variant, rung=rung, seconds=seconds, bytes=size, ssim=quality,
                         cpu_per_s=rung_cpu / seconds, total_cpu_per_s=sum(cpu.values()) / seconds,
                         decode_cpu_per_s=cpu.get("transcode", 0) / seconds))
    return rows

def main():
    if not shutil.which("perf"):
        sys.exit("error: perf not found (Debian: linux-perf)")
    wanted = os.environ.get("LEVERS", " ".join(VARIANTS)).split()
    rows = []
    for source in sources():
        for variant in ["base"] + [v for v in wanted if v != "base"]:
            got = measure(source, variant)
            rows += got
            for row in got:
                print("\t".join(str(row[k]) for k in ("source", "variant", "rung", "bytes", "ssim", "cpu_per_s", "total_cpu_per_s")), flush=True)
    with open(os.path.join(OUT, "levers.tsv"), "w") as f:
        keys = list(rows[0])
        f.write("\t".join(keys) + "\n")
        for row in rows:
            f.write("\t".join(str(row[k]) for k in keys) + "\n")
    report(rows)

def report(rows):
    base = {(r["source"], r["rung"]): r for r in rows if r["variant"] == "base"}
    variants = list(dict.fromkeys(r["variant"] for r in rows))
    print("\nPer variant against base, over every source (bytes ratio and SSIM difference per rung; "
          "worst case = the source where it is worst; CPU = whole transcode, CPU-s per video-s):")
    print(f"{'variant':22} {'rung':6} {'bytes median':>12} {'bytes worst':>11} {'dSSIM median':>12} {'dSSIM worst':>11} {'rung CPU':>9} {'total CPU':>9}")
    for variant in variants:
        if variant == "base":
            continue
        for rung in ALL:
            pairs = [(r, base[(r["source"], rung)]) for r in rows
                     if r["variant"] == variant and r["rung"] == rung and (r["source"], rung) in base]
            if not pairs:
                continue
            ratios = sorted(r["bytes"] / b["bytes"] for r, b in pairs if b["bytes"])
            dssim = sorted(r["ssim"] - b["ssim"] for r, b in pairs if r["ssim"] is not None and b["ssim"] is not None)
            cpu = sum(r["cpu_per_s"] for r, _ in pairs) / max(1e-9, sum(b["cpu_per_s"] for _, b in pairs))
            total = sum(r["total_cpu_per_s"] for r, _ in pairs) / max(1e-9, sum(b["total_cpu_per_s"] for _, b in pairs))
            mid = lambda xs: xs[len(xs) // 2] if xs else float("nan")
            print(f"{variant:22} {rung:6} {mid(ratios):12.3f} {max(ratios, default=float('nan')):11.3f} "
                  f"{mid(dssim):+12.4f} {min(dssim, default=float('nan')):+11.4f} {cpu:9.3f} {total:9.3f}")

if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--report":
        lines = open(os.path.join(OUT, "levers.tsv")).read().splitlines()
        keys = lines[0].split("\t")
        parse = lambda k, v: v if k in ("source", "variant", "rung") else (None if v == "None" else float(v))
        report([{k: parse(k, v) for k, v in zip(keys, line.split("\t"))} for line in lines[1:]])
    else:
        main()
