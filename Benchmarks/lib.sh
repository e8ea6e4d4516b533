# Shared by the side-by-side benchmarks.
source "$(dirname "${BASH_SOURCE[0]}")/lib/record.sh"

# measure LABEL COMMAND... → "wall_seconds max_rss_kb" (GNU time; the log is kept in $OUT).
measure() {  # measure LABEL COMMAND... → "wall_seconds max_rss_kb"
  local label=$1; shift
  local log="$OUT/time-$label.txt"
  if ! /usr/bin/time -v "$@" > /dev/null 2> "$log"; then
    echo "$label failed:" >&2; head -5 "$log" >&2; exit 1
  fi
  local wall rss
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,t,":"); s=0; for(i=1;i<=n;i++) s=s*60+t[i]; print s}' "$log")
  rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$log")
  echo "$wall $rss"
}


# side_by_side LABEL WALL_TARGET RSS_TARGET: runs the caller's functions `ingestd_side` and
# `ffmpeg_side` (variables they use must be exported) $RUNS times each, alternating, prints one
# row per run and the wall-time (best of) and peak-RSS (max of) ratios ingestd/ffmpeg.
side_by_side() {
  local label=$1 wall_target=$2 rss_target=$3
  local best_i="" best_f="" i_rss=0 f_rss=0 run w r
  printf "%-8s %-4s %10s %12s\n" tool run wall_s peak_rss_MB
  for run in $(seq 1 "$RUNS"); do
    read -r w r < <(measure "$label-ingestd-$run" bash -c "$(declare -f ingestd_side); ingestd_side")
    printf "%-8s %-4s %10.2f %12.1f\n" ingestd "$run" "$w" "$(echo "$r/1024" | bc -l)"
    best_i=$(python3 -c "print(min(x for x in [$w, ${best_i:-1e9}]))"); i_rss=$(( r > i_rss ? r : i_rss ))
    read -r w r < <(measure "$label-ffmpeg-$run" bash -c "$(declare -f ffmpeg_side); ffmpeg_side")
    printf "%-8s %-4s %10.2f %12.1f\n" ffmpeg "$run" "$w" "$(echo "$r/1024" | bc -l)"
    best_f=$(python3 -c "print(min(x for x in [$w, ${best_f:-1e9}]))"); f_rss=$(( r > f_rss ? r : f_rss ))
  done
  echo
  python3 - "$label" "$best_i" "$best_f" "$i_rss" "$f_rss" "$RUNS" "$wall_target" "$rss_target" <<'PY'
import sys
label = sys.argv[1]
wi, wf, ri, rf, runs = map(float, sys.argv[2:7])
wt, rt = sys.argv[7:9]
print(f"{label} wall-time ratio ingestd/ffmpeg (best of {int(runs)}): {wi/wf:.2f}  ({wi:.1f} s vs {wf:.1f} s{'; target <= ' + wt if wt else ''})")
print(f"{label} peak-RSS  ratio ingestd/ffmpeg (max of {int(runs)}):  {ri/rf:.2f}  ({ri/1024:.0f} MB vs {rf/1024:.0f} MB{'; target <= ' + rt if rt else ''})")
PY
  record_reset "$label"
  record "$label" "ingestd vs CLI" "wall ratio (best of $RUNS)" "$(python3 -c "print($best_i/$best_f)")" "${wall_target:+<= $wall_target}"
  record "$label" "ingestd vs CLI" "peak RSS ratio" "$(python3 -c "print($i_rss/$f_rss)")" "${rss_target:+<= $rss_target}"
}
