#!/usr/bin/env bash
# #47's check: the README's two commands on a fresh clone while a busy loop holds one core.
#
#   Scripts/underload.sh [COMMIT] [RUNS]
#
# Each run clones this repository at COMMIT (default HEAD) into a new `mktemp -d` (mode 0700),
# starts `sh -c 'while :; do :; done'`, times `make demo`, then `make test`, stops the loop and
# prints one line: commit, the two wall times, the tests' result line. Logs stay in the clone
# (demo.log, test.log); the summary in $UNDERLOAD_OUT (default /tmp/underload.tsv).
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
commit=$(git -C "$repo" rev-parse --short "${1:-HEAD}")
runs=${2:-1}
out=${UNDERLOAD_OUT:-/tmp/underload.tsv}
for run in $(seq 1 "$runs"); do
  clone=$(mktemp -d)
  git clone -q "$repo" "$clone" && git -C "$clone" checkout -q "$commit"
  sh -c 'while :; do :; done' &
  busy=$!
  start=$(date +%s)
  (cd "$clone" && make demo >demo.log 2>&1); demo_rc=$?
  mid=$(date +%s)
  (cd "$clone" && make test >test.log 2>&1); test_rc=$?
  end=$(date +%s)
  kill "$busy"
  result=$(grep -E "Test run with [0-9]+ tests.*(passed|failed)" "$clone/test.log" | tail -1 | sed 's/^[^A-Za-z]*//')
  demo="$(ls "$clone/out/demo/spool/archive" 2>/dev/null | wc -l) published, $(ls "$clone/out/demo/spool/rejected" 2>/dev/null | wc -l) rejected"
  line=$(printf '%s\t%s\tdemo %ss rc %s (%s)\ttest %ss rc %s\t%s\t%s' "$(date -u +%FT%TZ)" "$commit" \
    $((mid - start)) "$demo_rc" "$demo" $((end - mid)) "$test_rc" "$result" "$clone")
  echo "$line" | tee -a "$out"
done
