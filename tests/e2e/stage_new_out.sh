#!/usr/bin/env bash
# eh2s_file_opts.new_out: the output is a staging name of the caller's,
# created and written directly (no temporary file of its own, no rename),
# as tree mode stages its files. Checked from outside (strace, cmp):
#   - tree mode (-j 2): each converted file is created once, under its
#     staging name, with O_EXCL; the only renames are those of the staged
#     files over their originals; no ".NAME.e2sXXXXXX" temporary file;
#     the results equal one-file --in-place conversions;
#   - the library: new_out = 1 writes OUT with no rename and the bytes
#     of `-o`; an existing OUT is refused and left as it was; a failed
#     conversion leaves no OUT; a caller whose struct ends before new_out
#     (built against 1.2) gets the temporary file and its rename.
set -u
cd "$(dirname "$0")/../.."
TREE=$PWD
E2S=${E2S:-$PWD/eh2sframe}
[ -x "$E2S" ] || { echo "no eh2sframe binary"; exit 77; }
command -v strace >/dev/null || { echo "no strace (tools/install-deps.sh installs it)"; exit 77; }
T=$(mktemp -d /tmp/stage_new_out.XXXXXX)
trap 'rm -rf "$T"' EXIT
fails=0 checks=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { checks=$((checks + 1)); }
progs=(/usr/bin/ls /usr/bin/cat /usr/bin/date /usr/bin/sort /usr/bin/head)

# ---- tree mode
mkdir -p "$T/a" "$T/ref"
for p in "${progs[@]}"; do
  cp "$p" "$T/a/"; cp "$p" "$T/ref/"
  "$E2S" -q --in-place "$T/ref/${p##*/}" || fail "reference ${p##*/}: exit $?"
done
strace -f -qq -e trace=openat,open,creat,rename,renameat,renameat2,link,linkat \
  -o "$T/trace" "$E2S" -q --in-place -r -j 2 "$T/a" || fail "tree run: exit $?"
python3 - "$T/trace" "$T/a" "${#progs[@]}" <<'PY' && ok || fail "tree mode's system calls (see above)"
import re, sys
lines = open(sys.argv[1]).read().splitlines()
root, want = sys.argv[2], int(sys.argv[3])
bad = 0
creates = [l for l in lines if re.search(r'open(at)?\(.*"' + re.escape(root) + r'/[^"]*".*O_CREAT', l)]
staged = [l for l in creates if "/.e2stage." in l]
if len(staged) != want or any("O_EXCL" not in l for l in staged):
    print("staging files created (want %d, each O_EXCL):" % want, *staged, sep="\n  "); bad += 1
temps = [l for l in creates if re.search(r'/\.[^/"]*\.e2s[A-Za-z0-9]{6}"', l)]
if temps:
    print("temporary files of their own:", *temps, sep="\n  "); bad += 1
others = [l for l in creates if l not in staged and l not in temps]
if others:
    print("other files created:", *others, sep="\n  "); bad += 1
ren = [l for l in lines if re.search(r'\brename(at2?)?\(', l)]
over = [l for l in ren if re.search(r'/\.e2stage\.[^"]*", [^"]*"' + re.escape(root) + r'/[^./"][^"]*"', l)]
if len(ren) != want or len(over) != want:
    print("renames (want %d, each a staged file over its original):" % want, *ren, sep="\n  "); bad += 1
sys.exit(1 if bad else 0)
PY
for p in "${progs[@]}"; do
  n=${p##*/}
  cmp -s "$T/a/$n" "$T/ref/$n" && ok || fail "tree mode: $n differs from --in-place's"
done
[ -z "$(find "$T/a" -name '.*')" ] && ok || fail "left behind: $(find "$T/a" -name '.*')"
"$T/a/ls" --version >/dev/null && ok || fail "converted ls does not run"

# ---- the library
LIB=$TREE/build/libeh2sframe.a
if [ ! -f "$LIB" ] || [ ! -f "$TREE/include/eh2sframe.h" ]; then
  echo "note: no $LIB: the library's new_out is not checked"
  echo "stage_new_out: $checks passed, $fails failed"
  [ $fails = 0 ]; exit
fi
cat >"$T/lib.c" <<'C'
#include <eh2sframe.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* lib IN OUT NEW_OUT [OLD]: convert IN into OUT (in place: IN's owner
 * and mode); OLD: as a caller whose header ended before new_out, with
 * new_out's bytes set all the same. Prints the status's name. */
int main(int argc, char **argv)
{
	eh2s_file_opts fo;
	eh2s_error err;
	if (argc < 4)
		return 2;
	eh2s_file_opts_init(&fo);
	fo.in_place = 1;
	fo.new_out = atoi(argv[3]);
	if (argc > 4)
		fo.size = offsetof(eh2s_file_opts, new_out);
	eh2s_status st = eh2s_convert_file(argv[1], argv[2], &fo, NULL, NULL, &err);
	printf("%s\n", st == EH2S_OK ? "ok" : st == EH2S_E_IO ? "io" : "other");
	if (st != EH2S_OK)
		fprintf(stderr, "%s\n", err.message);
	return st == EH2S_OK ? 0 : 1;
}
C
if ! gcc -std=c11 -Wall -Wextra -Werror -I"$TREE/include" -o "$T/lib" "$T/lib.c" \
     "$LIB" -lz -llzma 2>"$T/cc.err"; then
  fail "a program setting eh2s_file_opts.new_out does not build: $(head -3 "$T/cc.err")"
  echo "stage_new_out: $checks passed, $fails failed"
  exit 1
fi
mkdir -p "$T/l"
cp /usr/bin/ls "$T/l/in"; chmod 4751 "$T/l/in"
"$E2S" -q "$T/l/in" -o "$T/l/ref"
renames() { grep -cE '\brename(at2?)?\(' "$1"; }

# new_out = 1: written directly, the bytes of -o, the input's mode.
strace -f -qq -e trace=rename,renameat,renameat2 -o "$T/l1.trace" "$T/lib" "$T/l/in" "$T/l/.stage1" 1 >/dev/null ||
  fail "library, new_out = 1: exit $?"
[ "$(renames "$T/l1.trace")" = 0 ] && ok || fail "library, new_out = 1: renamed: $(cat "$T/l1.trace")"
cmp -s "$T/l/.stage1" "$T/l/ref" && ok || fail "library, new_out = 1: bytes differ from -o's"
[ "$(stat -c %a "$T/l/.stage1")" = 4751 ] && ok || fail "library, new_out = 1: mode $(stat -c %a "$T/l/.stage1"), want 4751"

# An existing OUT: refused (EH2S_E_IO), left as it was.
printf 'keep me\n' >"$T/l/.stage2"
out=$("$T/lib" "$T/l/in" "$T/l/.stage2" 1 2>"$T/l2.err"); rc=$?
[ $rc = 1 ] && [ "$out" = io ] && ok || fail "library, existing OUT: exit $rc, status $out, want io"
grep -q 'exists' "$T/l2.err" && ok || fail "library, existing OUT: message $(cat "$T/l2.err")"
cmp -s "$T/l/.stage2" <(printf 'keep me\n') && ok || fail "library, existing OUT: it changed"

# A failed conversion: nothing left.
printf 'not elf\n' >"$T/l/text"
"$T/lib" "$T/l/text" "$T/l/.stage3" 1 >/dev/null 2>&1; rc=$?
[ $rc = 1 ] && [ ! -e "$T/l/.stage3" ] && ok || fail "library, failed conversion: exit $rc, OUT $(ls -A "$T/l")"

# Built against 1.2 (the struct ends before new_out): a temporary file and
# its rename to OUT, whatever new_out's bytes say.
strace -f -qq -e trace=rename,renameat,renameat2 -o "$T/l4.trace" "$T/lib" "$T/l/in" "$T/l/.stage4" 1 old >/dev/null ||
  fail "library, 1.2 caller: exit $?"
[ "$(renames "$T/l4.trace")" = 1 ] && ok || fail "library, 1.2 caller: renames $(cat "$T/l4.trace"), want 1"
cmp -s "$T/l/.stage4" "$T/l/ref" && ok || fail "library, 1.2 caller: bytes differ from -o's"
[ -z "$(find "$T/l" -name '*.e2s*')" ] && ok || fail "library: left behind $(find "$T/l" -name '*.e2s*')"

echo "stage_new_out: $checks passed, $fails failed"
[ $fails = 0 ]
