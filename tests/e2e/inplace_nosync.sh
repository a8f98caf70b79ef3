#!/usr/bin/env bash
# --no-sync: --in-place without the sync before each rename (build
# trees, staging trees). Checked from outside, with strace:
#   - the default --in-place fsyncs each file, and tree mode syncs the
#     filesystem (the trace sees syncs when there are some);
#   - --in-place --no-sync on one file, on several, and tree mode -r
#     --no-sync call none of sync, fsync, fdatasync, syncfs,
#     sync_file_range, and still rename each file over its original;
#   - what they write is byte for byte what the default writes, keeps
#     mode (set-user-ID included) and owner, and passes --verify;
#   - --no-sync without --in-place (-o OUT) is a usage error: exit 2,
#     one error line, no OUT;
#   - the library: eh2s_convert_file in place with no_sync = 1 does not
#     sync; a caller whose struct ends before no_sync (built against the
#     1.1 header) gets the sync, whatever lies beyond its size.
# E2S names the binary; the header and static library are taken from
# the tree it was built in (its directory's include/ and build/).
set -u
cd "$(dirname "$0")/../.."
E2S=${E2S:-$PWD/eh2sframe}
[ -x "$E2S" ] || { echo "no eh2sframe binary"; exit 77; }
command -v strace >/dev/null ||
  { echo "no strace (tools/install-deps.sh installs it)"; exit 77; }
TREE=$(cd "$(dirname "$E2S")" && pwd -P)
T=$(mktemp -d /tmp/inplace_nosync.XXXXXX)
T=$(cd "$T" && pwd -P) # strace prints resolved paths
trap 'rm -rf "$T"' EXIT
fails=0 checks=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { checks=$((checks + 1)); }
root=0; [ "$(id -u)" = 0 ] && root=1

# traced TRACE CMD...: CMD under strace (threads too), sync and rename
# calls only, whatever the architecture calls them.
traced() {
  local out=$1; shift
  strace -f -qq -o "$out" \
    -e trace='/^(sync|fsync|fdatasync|syncfs|sync_file_range2?|rename|renameat2?)$' "$@"
}
# calls TRACE FILE...: "SYNCS RENAMES": sync calls of any kind, and
# renames (not failed) of another name over one of the FILEs.
calls() {
  python3 - "$@" <<'PY'
import re, sys
targets = set(sys.argv[2:])
syncs = renames = 0
for l in open(sys.argv[1]):
    m = re.match(r"\s*(?:\d+\s+)?(\w+)\((.*)", l)
    if not m:
        continue  # "<... resumed>" halves
    name, rest = m.groups()
    if name in ("sync", "fsync", "fdatasync", "syncfs", "sync_file_range",
                "sync_file_range2"):
        syncs += 1
    elif name.startswith("rename") and not re.search(r"= -1 ", rest):
        paths = re.findall(r'"((?:[^"\\]|\\.)*)"', rest)
        if len(paths) >= 2 and paths[1] in targets and paths[0] not in targets:
            renames += 1
print(syncs, renames)
PY
}
# attrs FILE: mode (set-ID bits included) and owner.
attrs() { stat -c '%a %u:%g' "$1"; }
# leftovers DIR: staged or temporary files of ours.
leftovers() { find "$1" \( -name '.e2stage.*' -o -name '.*.e2s*' \) | wc -l; }

# ---- the inputs: two programs (one set-user-ID, given to another owner
# when root) and two relocatable objects, as a build makes them
mkdir -p "$T/src"
cp /usr/bin/ls "$T/src/prog"
cp /usr/bin/cat "$T/src/prog2" && chmod 0750 "$T/src/prog2"
if [ $root = 1 ]; then
  chown 1:1 "$T/src/prog" && chown 2:2 "$T/src/prog2" && chmod 0750 "$T/src/prog2"
fi
chmod 4755 "$T/src/prog" # after the chown, which clears it
for i in 1 2; do
  printf 'int g(int);\nint f%d(int *p, int n) { int s = 0; for (int i = 0; i < n; i++) s += g(p[i]); return s; }\n' \
    "$i" >"$T/o$i.c"
  gcc -O2 -fasynchronous-unwind-tables -c -o "$T/src/o$i.o" "$T/o$i.c" ||
    fail "cannot compile o$i.c"
done
files=(prog prog2 o1.o o2.o)
for f in "${files[@]}"; do attrs "$T/src/$f" >"$T/src/$f.attrs"; done
# fresh DIR: a copy of the inputs, attributes included.
fresh() { mkdir -p "$1" && for f in "${files[@]}"; do cp -a "$T/src/$f" "$1/"; done; }
# same DIR HOW FILE...: each FILE as the default run wrote it, with its
# original's mode and owner, verified, and nothing of ours left over.
same() {
  local d=$1 how=$2 f
  shift 2
  for f in "$@"; do
    cmp -s "$d/$f" "$T/ref/$f" && ok || fail "$how: $f differs from the default --in-place output"
    [ "$(attrs "$d/$f")" = "$(cat "$T/src/$f.attrs")" ] && ok ||
      fail "$how: $f: mode and owner $(attrs "$d/$f"), had $(cat "$T/src/$f.attrs")"
    "$E2S" --verify -q "$d/$f" >/dev/null 2>"$T/verify.err" && ok ||
      fail "$how: $f does not pass --verify: $(head -3 "$T/verify.err")"
  done
  [ "$(leftovers "$d")" = 0 ] && ok || fail "$how: left behind: $(find "$d" -name '.*')"
}

# ---- the default: each file fsync'ed before its rename
fresh "$T/ref"
traced "$T/ref.trace" "$E2S" -q --in-place "${files[@]/#/$T/ref/}" || fail "default run: exit $?"
read -r s r < <(calls "$T/ref.trace" "${files[@]/#/$T/ref/}")
[ "$s" -ge ${#files[@]} ] && ok || fail "default --in-place: $s sync calls for ${#files[@]} files (the trace sees none?)"
[ "$r" = ${#files[@]} ] && ok || fail "default --in-place: $r renames over the originals, want ${#files[@]}"
for f in "${files[@]}"; do
  LC_ALL=C readelf -SW "$T/ref/$f" | grep -q ' \.sframe ' && ok || fail "default: $f not converted"
  [ "$(attrs "$T/ref/$f")" = "$(cat "$T/src/$f.attrs")" ] && ok || fail "default: $f: $(attrs "$T/ref/$f")"
done
"$T/ref/prog" --version >/dev/null && ok || fail "the converted program does not run"

# ---- --no-sync, one file
fresh "$T/one"
traced "$T/one.trace" "$E2S" -q --in-place --no-sync "$T/one/prog" || fail "--no-sync FILE: exit $?"
read -r s r < <(calls "$T/one.trace" "$T/one/prog")
[ "$s" = 0 ] && ok || fail "--no-sync FILE: $s sync calls"
[ "$r" = 1 ] && ok || fail "--no-sync FILE: $r renames over the original, want 1"
same "$T/one" "--no-sync FILE" prog
cmp -s "$T/one/prog2" "$T/src/prog2" && ok || fail "--no-sync FILE changed another file"

# ---- --no-sync, several files
fresh "$T/many"
traced "$T/many.trace" "$E2S" -q --in-place --no-sync "${files[@]/#/$T/many/}" ||
  fail "--no-sync FILE...: exit $?"
read -r s r < <(calls "$T/many.trace" "${files[@]/#/$T/many/}")
[ "$s" = 0 ] && ok || fail "--no-sync FILE...: $s sync calls"
[ "$r" = ${#files[@]} ] && ok || fail "--no-sync FILE...: $r renames over the originals, want ${#files[@]}"
same "$T/many" "--no-sync FILE..." "${files[@]}"

# ---- tree mode: the default syncs the filesystem once per batch,
# --no-sync does not; the staged files are renamed either way
fresh "$T/tdef/sub"
traced "$T/tdef.trace" "$E2S" -q --in-place -r --objects "$T/tdef" || fail "tree: exit $?"
read -r s r < <(calls "$T/tdef.trace" "${files[@]/#/$T/tdef/sub/}")
[ "$s" -ge 1 ] && ok || fail "tree mode: no sync call (the trace sees none?)"
[ "$r" = ${#files[@]} ] && ok || fail "tree mode: $r renames over the originals, want ${#files[@]}"
fresh "$T/tree/sub"
traced "$T/tree.trace" "$E2S" -q --in-place -r --objects -j 2 --no-sync "$T/tree" ||
  fail "tree --no-sync: exit $?"
read -r s r < <(calls "$T/tree.trace" "${files[@]/#/$T/tree/sub/}")
[ "$s" = 0 ] && ok || fail "tree mode --no-sync: $s sync calls"
[ "$r" = ${#files[@]} ] && ok || fail "tree mode --no-sync: $r renames over the originals, want ${#files[@]}"
same "$T/tree/sub" "tree --no-sync" "${files[@]}"
for f in "${files[@]}"; do
  cmp -s "$T/tree/sub/$f" "$T/tdef/sub/$f" && ok || fail "tree: $f differs with and without --no-sync"
done

# ---- --no-sync without --in-place: refused, nothing written
mkdir -p "$T/o"
"$E2S" --no-sync "$T/src/prog" -o "$T/o/out" 2>"$T/o.err"; rc=$?
[ $rc = 2 ] && ok || fail "--no-sync -o OUT: exit $rc, want 2"
[ "$(grep -c '^eh2sframe: ' "$T/o.err")" = 1 ] && grep -q -- '^eh2sframe: --no-sync' "$T/o.err" && ok ||
  fail "--no-sync -o OUT: not one error line about --no-sync: $(cat "$T/o.err")"
[ -z "$(ls -A "$T/o")" ] && ok || fail "--no-sync -o OUT wrote: $(ls -A "$T/o")"
"$E2S" --in-place --no-sync "$T/src/prog" -o "$T/o/out" 2>/dev/null; rc=$?
[ $rc = 2 ] && [ -z "$(ls -A "$T/o")" ] && ok || fail "--in-place --no-sync -o OUT: exit $rc, wrote $(ls -A "$T/o")"

# ---- the library: eh2s_file_opts.no_sync
LIB=$TREE/build/libeh2sframe.a
if [ -f "$LIB" ] && [ -f "$TREE/include/eh2sframe.h" ]; then
  cat >"$T/lib.c" <<'C'
#include <eh2sframe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* lib FILE NO_SYNC [OLD]: convert FILE in place; OLD: as a caller whose
 * header ended before no_sync, with no_sync's bytes set all the same. */
int main(int argc, char **argv)
{
	eh2s_file_opts fo;
	eh2s_error err;
	if (argc < 3)
		return 2;
	eh2s_file_opts_init(&fo);
	fo.in_place = 1;
	fo.no_sync = atoi(argv[2]);
	if (argc > 3)
		fo.size = offsetof(eh2s_file_opts, no_sync);
	if (eh2s_convert_file(argv[1], argv[1], &fo, NULL, NULL, &err) != EH2S_OK) {
		fprintf(stderr, "%s: %s\n", argv[1], err.message);
		return 1;
	}
	return 0;
}
C
  if gcc -std=c11 -Wall -Wextra -Werror -I"$TREE/include" -o "$T/lib" "$T/lib.c" \
       "$LIB" -lz -llzma 2>"$T/cc.err"; then
    ok
    fresh "$T/lib0"; fresh "$T/lib1"; fresh "$T/libold"
    for how in lib1 lib0 libold; do
      case $how in
        lib1) args=(1) ;; lib0) args=(0) ;; libold) args=(1 old) ;;
      esac
      traced "$T/$how.trace" "$T/lib" "$T/$how/prog" "${args[@]}" || fail "$how: exit $?"
      read -r s r < <(calls "$T/$how.trace" "$T/$how/prog")
      case $how in
        lib1) [ "$s" = 0 ] && ok || fail "library, no_sync = 1: $s sync calls" ;;
        *) [ "$s" -ge 1 ] && ok || fail "library, $how: no sync call" ;;
      esac
      [ "$r" = 1 ] && ok || fail "library, $how: $r renames over the file, want 1"
      cmp -s "$T/$how/prog" "$T/ref/prog" && ok || fail "library, $how: prog differs from the command's"
      [ "$(attrs "$T/$how/prog")" = "$(cat "$T/src/prog.attrs")" ] && ok ||
        fail "library, $how: mode and owner $(attrs "$T/$how/prog")"
    done
  else
    fail "a program setting eh2s_file_opts.no_sync does not build against $TREE/include: $(head -3 "$T/cc.err")"
  fi
else
  echo "note: no $LIB: the library's no_sync is not checked"
fi

[ $root = 1 ] || echo "note: not root: owners other than ours not exercised"
echo "inplace_nosync: $checks passed, $fails failed"
[ $fails -eq 0 ]
