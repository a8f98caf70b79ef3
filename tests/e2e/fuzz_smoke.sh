#!/usr/bin/env bash
# A short libFuzzer run of every target (FUZZ_SMOKE_SECONDS in total,
# default 36, split evenly), then a replay of the committed seeds and
# regression inputs through the gcc ASan+UBSan drivers (no libFuzzer).
# Skips (77) when clang is missing.
set -u
cd "$(dirname "$0")/../.."
command -v clang >/dev/null || { echo "clang missing"; exit 77; }
total=${FUZZ_SMOKE_SECONDS:-36}
make -s fuzz-build replay >/dev/null || { echo "fuzz build failed"; exit 1; }
rc=0
bins=(build/fuzz/fuzz_*)
list=()
for b in "${bins[@]}"; do [ -x "$b" ] && [ -f "$b" ] && list+=("$b"); done
per=$(( total / ${#list[@]} )); [ $per -lt 1 ] && per=1
bash tests/fuzz/run.sh "$per" "${list[@]}" || rc=1
pass=0 fail=0
for r in build/asan/replay/fuzz_*; do
  name=$(basename "$r")
  dirs=()
  for d in tests/fuzz/regress/$name tests/fuzz/seeds/$name; do [ -d "$d" ] && dirs+=("$d"); done
  [ ${#dirs[@]} -gt 0 ] || continue
  if out=$("$r" "${dirs[@]}" 2>&1); then
    pass=$((pass + 1)); echo "replay $name: $(echo "$out" | tail -1)"
  else
    fail=$((fail + 1)); rc=1; echo "replay $name FAILED:"; echo "$out" | tail -30
  fi
done
echo "fuzz smoke: replay targets passed=$pass failed=$fail"
exit $rc
