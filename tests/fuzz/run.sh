#!/usr/bin/env bash
# Runs each libFuzzer binary for SECONDS, seeded from tests/fuzz/seeds/<name>
# and tests/fuzz/regress/<name>; new crashes land in build/fuzz/crashes/.
# Prints executions and findings per target; exits 1 if any target crashed.
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
  if [ -x tests/fuzz/seed-$name.sh ]; then bash tests/fuzz/seed-$name.sh build/fuzz/seeds/$name >/dev/null 2>&1 && seeds+=(build/fuzz/seeds/$name); fi
  log=build/fuzz/$name.log
  "$bin" -max_total_time="$secs" -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$crashes/" "$corpus" "${seeds[@]}" >"$log" 2>&1
  r=$?
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$')
  ncrash=$(find "$crashes" -type f | wc -l)
  echo "fuzz $name: ${secs}s executions=${execs:-?} corpus=$(ls "$corpus" | wc -l) crashes=$ncrash exit=$r"
  if [ $r -ne 0 ] || [ "$ncrash" -ne 0 ]; then rc=1; tail -40 "$log"; fi
done
exit $rc
