#!/usr/bin/env bash
# Prints every figure the benchmarks recorded (Benchmarks/lib/record.sh) as one table: ratios
# are ingestd / the ffmpeg CLI doing the same work in the same run; "met" checks the target.
# A report, not a gate: it exits 0 whatever is missed (the count is on its last line).
set -euo pipefail
cd "$(dirname "$0")/.."
file=${BENCH_OUT:-bench-out}/summary.tsv
[ -s "$file" ] || { echo "no benchmark figures in $file (run make bench)" >&2; exit 1; }
python3 - "$file" <<'PY'
import sys
rows = [line.rstrip("\n").split("\t") for line in open(sys.argv[1]) if line.strip()]
def met(value, target):
    if not target: return ""
    op, limit = target.split()
    v, t = float(value), float(limit)
    return "yes" if (v <= t if op == "<=" else v >= t) else "NO"
def fmt(value, measure):
    v = float(value)
    if "dSSIM" in measure: return f"{v:+.4f}"
    return f"{v:.4f}" if "SSIM" in measure else f"{v:.0f}" if abs(v) >= 100 else f"{v:.3f}"
widths = [max(len(r[i]) for r in rows + [["bench", "case", "measure"]]) for i in range(3)]
head = f"{'bench':{widths[0]}}  {'case':{widths[1]}}  {'measure':{widths[2]}}  {'value':>9}  {'target':>8}  met"
print(head); print("-" * len(head))
for bench, case, measure, value, target in rows:
    print(f"{bench:{widths[0]}}  {case:{widths[1]}}  {measure:{widths[2]}}  {fmt(value, measure):>9}  {target:>8}  {met(value, target)}")
missed = [r for r in rows if met(r[3], r[4]) == "NO"]
print(f"\n{len(rows)} figures, {sum(1 for r in rows if r[4])} with a target, {len(missed)} missed")
PY
