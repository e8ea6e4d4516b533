# `make bench`'s one table: each benchmark records its figures here, Benchmarks/summary.sh prints
# them. Rows go to $BENCH_OUT/summary.tsv (bench, case, measure, value, target); a benchmark that
# runs again replaces its own rows.
SUMMARY_FILE=${BENCH_OUT:-bench-out}/summary.tsv

# record_reset BENCH: forgets BENCH's rows from an earlier run.
record_reset() {
  mkdir -p "$(dirname "$SUMMARY_FILE")"
  touch "$SUMMARY_FILE"
  awk -F'\t' -v b="$1" '$1 != b' "$SUMMARY_FILE" > "$SUMMARY_FILE.tmp" && mv "$SUMMARY_FILE.tmp" "$SUMMARY_FILE"
}

# record BENCH CASE MEASURE VALUE [TARGET]: one row; TARGET is "<= 0.5", ">= 0.99" or empty.
# A value that is not a number (a measurement that failed) stops the benchmark.
record() {
  python3 -c 'import sys; float(sys.argv[1])' "$4" 2>/dev/null \
    || { echo "error: $1 / $2 / $3: not a number: '$4'" >&2; exit 1; }
  mkdir -p "$(dirname "$SUMMARY_FILE")"
  printf "%s\t%s\t%s\t%s\t%s\n" "$1" "$2" "$3" "$4" "${5:-}" >> "$SUMMARY_FILE"
}

# record_farm_bench BENCH CASE FARM_BENCH_OUTPUT CPU_TARGET WALL_TARGET RSS_TARGET: the medians of
# farm-bench's A/B cpu and wall ratios, and the ratio of the median peak RSS (A = ingestd).
record_farm_bench() {
  local bench=$1 label=$2 file=$3 cpu wall rss
  read -r cpu wall rss < <(python3 - "$file" <<'PY'
import sys
rows = {}
for line in open(sys.argv[1]):
    parts = line.split()
    try:
        rows[" ".join(parts[:-3])] = float(parts[-2])  # "A/B cpu  min median max": the median
    except (ValueError, IndexError):
        pass
print(rows["A/B cpu"], rows["A/B wall"], rows["A peak MiB"] / rows["B peak MiB"])
PY
)
  record "$bench" "$label" "CPU ratio" "$cpu" "$4"
  record "$bench" "$label" "wall ratio" "$wall" "$5"
  record "$bench" "$label" "peak RSS ratio" "$rss" "$6"
}
