#!/usr/bin/env bash
# What a large file costs in memory: --stats, -o and --in-place read the
# headers and the CFI, not the whole file (the input is mapped and the
# unchanged bytes are copied inside the kernel). A program carrying a
# 96 MiB section nothing converts must be reported and converted with a
# peak RSS far below its size (GNU time's %M is the judge), and -o must
# still write the same bytes as before the blob was there around it
# (the blob copied exactly). A reader that slurps the file (as
# eh2s_open once did for --stats: 140 MB for libLLVM-14) fails here.
set -u
cd "$(dirname "$0")/../.."
. tests/e2e/lib/elfpatch_lib.sh
[ -x "$E2S" ] || { echo "no eh2sframe binary"; exit 77; }
[ -x /usr/bin/time ] || { echo "SKIP: /usr/bin/time (Debian package time) missing"; exit 77; }
T=$(mktemp -d /tmp/io_memory.XXXXXX)
trap 'rm -rf "$T"' EXIT
n=0
limit_kb=$((32 * 1024)) # a third of the blob

printf 'int main(void) { return 0; }\n' >"$T/p.c"
gcc -O2 -o "$T/small" "$T/p.c" || fail "gcc"
head -c $((96 << 20)) /dev/urandom >"$T/blob"
objcopy --add-section .blob="$T/blob" "$T/small" "$T/big" || fail "objcopy"
size=$(stat -c %s "$T/big")
[ "$size" -gt $((96 << 20)) ] || fail "big file is only $size bytes"

peak() { # CMD... -> the command's exit in $rc, its peak RSS (KB) in $kb
  /usr/bin/time -f %M -o "$T/rss" "$@" >"$T/out.txt" 2>"$T/err.txt"
  rc=$?
  kb=$(tail -n1 "$T/rss")
}

peak "$E2S" --stats "$T/big"
n=$((n + 1))
[ $rc = 0 ] && grep -q '\.eh_frame' "$T/out.txt" || fail "--stats: exit $rc, $(head -c 300 "$T/err.txt")"
[ "$kb" -lt $limit_kb ] || fail "--stats peaked at $kb KB for a $size-byte file (limit $limit_kb KB)"

peak "$E2S" --stats --json "$T/big"
n=$((n + 1))
[ $rc = 0 ] && [ "$kb" -lt $limit_kb ] || fail "--stats --json: exit $rc, peak $kb KB"

rm -f "$T/conv"
peak "$E2S" -q "$T/big" -o "$T/conv"
n=$((n + 1))
[ $rc = 0 ] || fail "-o: exit $rc, $(cat "$T/err.txt")"
[ "$kb" -lt $limit_kb ] || fail "-o peaked at $kb KB for a $size-byte file (limit $limit_kb KB)"
# The blob came through byte for byte, and the program verifies.
objcopy --dump-section .blob="$T/blob.out" "$T/conv" "$T/conv.tmp" && cmp -s "$T/blob" "$T/blob.out" ||
  fail "-o: .blob not copied exactly"
"$E2S" --verify "$T/conv" >/dev/null 2>&1 || fail "-o: output does not verify"

cp "$T/big" "$T/inplace"
peak "$E2S" -q --in-place "$T/inplace"
n=$((n + 1))
[ $rc = 0 ] && [ "$kb" -lt $limit_kb ] || fail "--in-place: exit $rc, peak $kb KB"
cmp -s "$T/conv" "$T/inplace" || fail "--in-place and -o differ"

echo "io_memory: $n checks, $fails failed"
[ $fails = 0 ]
