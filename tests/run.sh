#!/usr/bin/env bash
# Runs the unit test binaries given as arguments, then every
# tests/e2e/*.sh; each is one test, passed when it exits 0 (77 = skipped).
# Ends with "N passed, N failed, N skipped".
set -u
cd "$(dirname "$0")/.."
# Tests that run make themselves do so as a user would: not under the
# jobserver of a `make -j N check` (whose descriptors they do not get:
# make then warns on stderr, which tests compare).
unset MAKEFLAGS MFLAGS MAKELEVEL
pass=0 fail=0 skip=0 failed_names=()
run_one() {
  local name=$1; shift
  local start=$SECONDS
  echo "=== $name"
  "$@"
  local rc=$?
  local took=$((SECONDS - start))
  if [ $rc -eq 0 ]; then pass=$((pass + 1)); echo "--- PASS $name (${took}s)"
  elif [ $rc -eq 77 ]; then skip=$((skip + 1)); echo "--- SKIP $name"
  else fail=$((fail + 1)); failed_names+=("$name"); echo "--- FAIL $name (exit $rc)"; fi
}
for t in "$@"; do run_one "unit/$(basename "$t")" "$t"; done
for t in tests/e2e/*.sh; do
  [ -e "$t" ] || continue
  run_one "e2e/$(basename "$t" .sh)" bash "$t"
done
[ ${#failed_names[@]} -gt 0 ] && echo "failed: ${failed_names[*]}"
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
