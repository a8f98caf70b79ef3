#!/usr/bin/env bash
# Files with nothing to convert: no CFI (assembly, -fno-asynchronous-
# unwind-tables), an empty .eh_frame, every function skipped. `-o` writes
# an exact copy and exits 0 (quietly; -v says why), --in-place leaves the
# file as it is, and --require-sframe turns each into a one-line error
# that names the reason (an empty .eh_frame is called empty), writing
# nothing. A linked program without CFI is copied too.
set -u
cd "$(dirname "$0")/../.."
. tests/e2e/lib/elfpatch_lib.sh
[ -x "$E2S" ] || { echo "no eh2sframe binary"; exit 77; }
T=$(mktemp -d /tmp/elfpatch_nothing.XXXXXX)
trap 'rm -rf "$T"' EXIT
n=0
printf '.text\n.globl f\nf: ret\n' >"$T/nocfi.s"
printf '.text\n.globl f\nf: ret\n.section .eh_frame,"a",@progbits\n' >"$T/empty.s"
# CFA = rsp + 8 + rbp, a DWARF expression of no shape SFrame has.
printf '.text\n.globl f\nf: .cfi_startproc\n .cfi_escape 0x0f,0x05,0x77,0x08,0x76,0x00,0x22\n ret\n .cfi_endproc\n' >"$T/skipped.s"
for c in nocfi empty skipped; do as "$T/$c.s" -o "$T/$c.o" || fail "as $c"; done
gcc -O2 -fno-asynchronous-unwind-tables -fno-unwind-tables -nostdlib -static -o "$T/prog" "$T/nocfi.o" \
  -Wl,-e,f 2>/dev/null || fail "link prog"
reason_nocfi='no .eh_frame or .debug_frame'
reason_empty='.eh_frame is empty'
reason_skipped='no function could be converted'
reason_prog=$reason_nocfi
for c in nocfi empty skipped prog; do
  f=$T/$c.o; [ $c = prog ] && f=$T/prog
  eval "why=\$reason_$c"
  # -o: an exact copy, exit 0, nothing on stderr without -v.
  rm -f "$T/out"
  "$E2S" "$f" -o "$T/out" 2>"$T/err"; rc=$?
  n=$((n + 1))
  [ $rc = 0 ] && cmp -s "$f" "$T/out" && { [ ! -s "$T/err" ] || [ $c = skipped ]; } ||
    fail "$c -o: exit $rc, $(cat "$T/err")"
  [ "$(stat -c %a "$T/out")" = "$(stat -c %a "$f")" ] || fail "$c -o: mode not kept"
  # -v says why.
  "$E2S" -v "$f" -o "$T/out" 2>"$T/err"
  grep -qF "nothing to convert" "$T/err" && grep -qF "$why" "$T/err" || fail "$c -v: $(cat "$T/err")"
  # --in-place: unchanged, exit 0.
  cp "$f" "$T/ip"
  "$E2S" --in-place "$T/ip" 2>/dev/null && cmp -s "$f" "$T/ip" || fail "$c --in-place"
  # --require-sframe: one line naming the reason, exit 1, no output.
  rm -f "$T/out"
  "$E2S" --require-sframe "$f" -o "$T/out" 2>"$T/err"; rc=$?
  n=$((n + 1))
  [ $rc = 1 ] && [ ! -e "$T/out" ] && [ "$(grep -c '^eh2sframe: ' "$T/err")" = 1 ] &&
    grep -qF "$why" "$T/err" || fail "$c --require-sframe: exit $rc, $(cat "$T/err")"
  "$E2S" --require-sframe --in-place "$T/ip" 2>/dev/null; rc=$?
  [ $rc = 1 ] && cmp -s "$f" "$T/ip" || fail "$c --require-sframe --in-place: exit $rc"
  echo "$c: copy, exit 0; --require-sframe: $(cat "$T/err")"
done
# A file that already has .sframe: -o copies it (as before), also with
# --require-sframe.
gcc -O2 -o "$T/hello" corpus/elfpatch/hello.c && "$E2S" -q "$T/hello" -o "$T/hello.sf" &&
  "$E2S" -q --require-sframe "$T/hello.sf" -o "$T/again" && cmp -s "$T/hello.sf" "$T/again" ||
  fail "existing .sframe with --require-sframe"
echo "cases $n, failures $fails"
[ $fails = 0 ]
