#!/usr/bin/env bash
# A short libFuzzer run of every target (FUZZ_SMOKE_SECONDS each, default
# 20; the whole smoke stays under 60 s), then a replay of the committed
# regression inputs under ASan+UBSan without libFuzzer.
set -u
cd "$(dirname "$0")/../.."
command -v clang >/dev/null || { echo "clang missing"; exit 77; }
secs=${FUZZ_SMOKE_SECONDS:-20}
make -s fuzz-build replay >/dev/null || { echo "fuzz build failed"; exit 1; }
rc=0
bins=(build/fuzz/fuzz_*)
per=$(( secs * 1 ))
[ ${#bins[@]} -gt 2 ] && per=$(( 55 / ${#bins[@]} ))
bash tests/fuzz/run.sh "$per" "${bins[@]}" || rc=1
for r in build/asan/replay/fuzz_*; do
  name=$(basename "$r")
  if [ -d tests/fuzz/regress/$name ]; then
    "$r" tests/fuzz/regress/$name || rc=1
  fi
done
exit $rc
