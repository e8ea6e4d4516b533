# Shared by the side-by-side benchmarks.

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

