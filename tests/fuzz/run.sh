#!/usr/bin/env bash
# Runs each libFuzzer binary for SECONDS, seeded from tests/fuzz/seeds/<name>,
# tests/fuzz/regress/<name> and tests/fuzz/seed-<name>.sh; the corpus grows
# in build/fuzz/corpus/<name>, new crashes land in build/fuzz/crashes/<name>.
# Every target gets the dictionary tests/fuzz/extreme.dict (edge values).
# Prints executions, coverage and findings per target; exits 1 if any
# target crashed during this run.
set -u
secs=$1; shift
cd "$(dirname "$0")/../.."
rc=0
for bin in "$@"; do
  name=$(basename "$bin")
  corpus=build/fuzz/corpus/$name; crashes=build/fuzz/crashes/$name
  mkdir -p "$corpus" "$crashes"
  seeds=()
  for d in tests/fuzz/seeds/$name tests/fuzz/regress/$name; do [ -d "$d" ] && seeds+=("$d"); done
  if [ -f tests/fuzz/seed-$name.sh ]; then
    [ -d build/fuzz/seeds/$name ] || bash tests/fuzz/seed-$name.sh build/fuzz/seeds/$name >/dev/null 2>&1
    [ -d build/fuzz/seeds/$name ] && seeds+=(build/fuzz/seeds/$name)
  fi
  log=build/fuzz/$name.log
  before=$(find "$crashes" -type f | wc -l)
  "$bin" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=20 -print_final_stats=1 \
    -dict=tests/fuzz/extreme.dict \
    -artifact_prefix="$crashes/" "$corpus" "${seeds[@]}" >"$log" 2>&1
  r=$?
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$')
  cov=$(grep -Eo 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1)
  ncrash=$(( $(find "$crashes" -type f | wc -l) - before ))
  echo "fuzz $name: ${secs}s executions=${execs:-?} ${cov:-cov: ?} corpus=$(ls "$corpus" | wc -l) new-crashes=$ncrash exit=$r"
  if [ $r -ne 0 ] || [ "$ncrash" -ne 0 ]; then rc=1; grep -A25 -E '^==[0-9]+==ERROR|runtime error|deadly signal' "$log" | head -40; fi
done
exit $rc
