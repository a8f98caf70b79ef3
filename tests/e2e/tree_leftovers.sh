#!/usr/bin/env bash
# What a run killed outright (SIGKILL, a power loss) leaves behind -- the
# staged files of tree mode (.e2stage.PID.N), the temporary files of
# writes (.NAME.e2sXXXXXX) and of relinks (.NAME.e2slinkK.PID) -- a
# later `eh2sframe --in-place -r` leaves alone. Checked from outside
# (cmp against the original bytes, readelf -S for .sframe, stat for
# inodes, strace for the order of the walk):
#   - each leftover is byte-identical after the run, the ordinary files
#     beside it are converted, a warning names it, the summary counts it,
#     and the exit status is 0; the same with -q (no warning) and with
#     the file named in --files-from;
#   - a file whose name only resembles ours (.e2stage.abc.1, .x.e2sABC,
#     e2stage.1.2, ...) is converted like any other;
#   - hard-linked files stay linked and debug files are still updated
#     with leftovers beside them;
#   - a leftover named after this run's own process ID (containers reuse
#     IDs) is not overwritten by what the run stages;
#   - the walk ends before anything is staged (-j 2), so a run never
#     meets its own files.
set -u
cd "$(dirname "$0")/../.."
E2S=${E2S:-$PWD/eh2sframe}
[ -x "$E2S" ] || { echo "no eh2sframe binary"; exit 77; }
T=$(mktemp -d /tmp/tree_leftovers.XXXXXX)
trap 'rm -rf "$T"' EXIT
fails=0 checks=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { checks=$((checks + 1)); }
has_sframe() { LC_ALL=C readelf -SW "$1" 2>/dev/null | grep -q ' \.sframe '; }
for p in /usr/bin/ls /usr/bin/cat /usr/bin/date /usr/bin/sort; do
  has_sframe "$p" && { echo "SKIP: $p already has .sframe"; exit 77; }
done

# An ID no process has (above pid_max), and one that runs (this shell).
dead=$(( $(cat /proc/sys/kernel/pid_max 2>/dev/null || echo 4194304) + 1 ))
live=$$

# ---- a tree with leftovers, look-alikes and ordinary files
D=$T/t
mkdir -p "$D/sub" "$T/orig"
cp /usr/bin/ls "$D/ls"
cp /usr/bin/cat "$D/sub/cat"
leftovers=(".e2stage.$dead.0" "sub/.e2stage.$live.7" ".date.e2sAbc123"
           "sub/.cat.e2s0Zz9Qa" "sub/.sort.e2slink0.$dead")
alike=(".e2stage.abc.1" ".x.e2sABC" "e2stage.1.2" ".e2stage.1.2.bak"
       ".e2stage.1." ".x.e2sAB_123" ".x.e2sABCDEFG" "..e2sABCDEF"
       ".x.e2slink.1" "sub/x.e2sABCDEF")
i=0
for f in "${leftovers[@]}"; do
  src=(/usr/bin/date /usr/bin/sort /usr/bin/ls /usr/bin/cat /usr/bin/sort)
  cp "${src[$i]}" "$D/$f"; cp "${src[$i]}" "$T/orig/$i"; i=$((i + 1))
done
for f in "${alike[@]}"; do cp /usr/bin/date "$D/$f"; done

# check_leftovers LABEL: every leftover has its original bytes.
check_leftovers() {
  local i=0 f
  for f in "${leftovers[@]}"; do
    cmp -s "$D/$f" "$T/orig/$i" && ok || fail "$1: $f changed"
    i=$((i + 1))
  done
}

ours() { find "$1" -name '.e2stage.*' -o -name '.*.e2s*' | sort; }
ours "$D" >"$T/before"
"$E2S" --in-place -r "$D" 2>"$T/err"; rc=$?
[ $rc = 0 ] && ok || fail "run: exit $rc, want 0: $(cat "$T/err")"
check_leftovers "run"
for f in ls sub/cat "${alike[@]}"; do
  has_sframe "$D/$f" && ok || fail "$f not converted"
done
"$D/ls" --version >/dev/null && ok || fail "converted ls does not run"
for f in "${leftovers[@]}"; do
  grep -F -- "$D/$f: warning:" "$T/err" | grep -q 'interrupted eh2sframe run.*left alone' &&
    ok || fail "no warning names $f: $(cat "$T/err")"
done
grep -F -- ".e2stage.$dead.0: warning:" "$T/err" | grep -q "process $dead has ended" &&
  ok || fail "the warning does not say process $dead has ended"
grep -F -- ".e2stage.$live.7: warning:" "$T/err" | grep -q "process $live is running" &&
  ok || fail "the warning does not say process $live is running"
for f in "${alike[@]}"; do
  grep -F -- "$D/$f:" "$T/err" && fail "a message about look-alike $f" || ok
done
total=$(( 2 + ${#alike[@]} + ${#leftovers[@]} ))
grep -Eq "^eh2sframe: $total files: $(( 2 + ${#alike[@]} )) patched, .*${#leftovers[@]} left alone \(leftovers of an interrupted run\), 0 failed$" "$T/err" &&
  ok || fail "summary: $(grep 'files:' "$T/err")"
# Nothing of this run's own is left.
ours "$D" | cmp -s - "$T/before" && ok || fail "files left: $(ours "$D" | comm -13 "$T/before" -)"

# ---- again, quiet: no warning, exit 0, leftovers as they were
"$E2S" -q --in-place -r "$D" 2>"$T/err"; rc=$?
[ $rc = 0 ] && ok || fail "-q run: exit $rc"
[ ! -s "$T/err" ] && ok || fail "-q printed: $(cat "$T/err")"
check_leftovers "-q run"

# ---- a leftover named in --files-from
printf '%s\n' "$D/.date.e2sAbc123" "$D/ls" >"$T/list"
"$E2S" --in-place --files-from="$T/list" 2>"$T/err"; rc=$?
[ $rc = 0 ] && ok || fail "--files-from: exit $rc"
grep -F -- "$D/.date.e2sAbc123: warning:" "$T/err" | grep -q 'left alone' && ok ||
  fail "--files-from: no warning: $(cat "$T/err")"
grep -q '^eh2sframe: 2 files: 0 patched, 1 already had .sframe, 1 left alone (leftovers of an interrupted run), 0 failed$' "$T/err" &&
  ok || fail "--files-from summary: $(grep 'files:' "$T/err")"
check_leftovers "--files-from"

# ---- hard links and a debug file, with leftovers beside them: a program
# with two names (and a relink leftover as a third), and one split as
# dh_strip does with a leftover next to its debug file.
H=$T/h
mkdir -p "$H/usr/bin"
cp /usr/bin/sort "$H/usr/bin/a"
ln "$H/usr/bin/a" "$H/usr/bin/b"
ln "$H/usr/bin/a" "$H/usr/bin/.b.e2slink0.$dead"
cp /usr/bin/ls "$H/usr/bin/ls"
id=$(readelf -n "$H/usr/bin/ls" | sed -n 's/.*Build ID: //p')
if [ -n "$id" ]; then
  dbg=$H/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
  mkdir -p "${dbg%/*}"
  objcopy --only-keep-debug "$H/usr/bin/ls" "$dbg"
  strip --remove-section=.gnu_debuglink "$H/usr/bin/ls"
  objcopy --add-gnu-debuglink "$dbg" "$H/usr/bin/ls"
  cp "$dbg" "${dbg%/*}/.${dbg##*/}.e2sQwErTy"
  cp "$dbg" "$T/dbg.orig"
fi
"$E2S" --in-place -r -j 2 "$H" 2>"$T/err"; rc=$?
[ $rc = 0 ] && ok || fail "links/debug: exit $rc: $(cat "$T/err")"
[ "$(stat -c %i "$H/usr/bin/a")" = "$(stat -c %i "$H/usr/bin/b")" ] && ok ||
  fail "a and b are no longer hard-linked"
has_sframe "$H/usr/bin/a" && has_sframe "$H/usr/bin/b" && ok || fail "a, b not converted"
cmp -s "$H/usr/bin/.b.e2slink0.$dead" /usr/bin/sort && ok || fail "relink leftover changed"
if [ -z "$id" ]; then
  fail "ls has no build ID: the debug file is not exercised"
else
  has_sframe "$H/usr/bin/ls" && ok || fail "ls not converted"
  grep -q 'debug files: 1 updated' "$T/err" && ok || fail "debug file: $(grep 'debug files' "$T/err")"
  ! cmp -s "$dbg" "$T/dbg.orig" && ok || fail "the debug file was not updated"
  cmp -s "${dbg%/*}/.${dbg##*/}.e2sQwErTy" "$T/dbg.orig" && ok || fail "debug leftover changed"
  # a, ls, the debug file (no CFI of its own), b, two leftovers
  grep -q '^eh2sframe: 6 files: 2 patched, 1 no CFI, 1 hard links of other files, 2 left alone (leftovers of an interrupted run), 0 failed$' "$T/err" &&
    ok || fail "links/debug: summary: $(grep 'files:' "$T/err")"
  if command -v eu-unstrip >/dev/null; then
    eu-unstrip -o "$T/ls.whole" "$H/usr/bin/ls" "$dbg" 2>/dev/null && ok ||
      fail "eu-unstrip cannot pair the converted file and its debug file"
  fi
fi

# ---- leftovers named after this run's own process ID: in a new PID
# namespace the program is process 1, and stages item N (here 0 and 1)
# as .e2stage.1.N unless that name is taken.
if unshare -pf true 2>/dev/null; then
  P=$T/p
  mkdir -p "$P"
  cp /usr/bin/ls "$P/a"; cp /usr/bin/cat "$P/b"
  for n in 0 1 3; do cp /usr/bin/date "$P/.e2stage.1.$n"; done
  unshare -pf -- "$E2S" -q --in-place -r "$P"; rc=$?
  [ $rc = 0 ] && ok || fail "own ID: exit $rc"
  for n in 0 1 3; do
    cmp -s "$P/.e2stage.1.$n" /usr/bin/date && ok || fail "own ID: .e2stage.1.$n changed or gone"
  done
  has_sframe "$P/a" && has_sframe "$P/b" && ok || fail "own ID: a, b not converted"
  [ "$(find "$P" -name '.*' -type f | wc -l)" = 3 ] && ok || fail "own ID: files left: $(ls -A "$P")"
else
  echo "note: unshare -p not permitted: a leftover with this run's own ID not exercised"
fi

# ---- the walk ends before the first file is staged: a run cannot meet
# its own staged files, in a later batch or another thread.
if command -v strace >/dev/null; then
  W=$T/w
  mkdir -p "$W/a/b"
  for k in 1 2 3; do cp /usr/bin/ls "$W/ls$k"; cp /usr/bin/cat "$W/a/cat$k"; cp /usr/bin/date "$W/a/b/date$k"; done
  strace -f -qq -e trace=getdents64,openat,rename -o "$T/trace" \
    "$E2S" -q --in-place -r -j 2 "$W" || fail "walk: exit $?"
  python3 - "$T/trace" <<'PY' && ok || fail "walk order (see above)"
import re, sys
lines = open(sys.argv[1]).read().splitlines()
first = next((i for i, l in enumerate(lines) if re.search(r'"[^"]*\.e2s', l)), None)
last = max((i for i, l in enumerate(lines) if "getdents64(" in l), default=None)
if first is None or last is None or last > first:
    print("walk read a directory after staging began:", first, last); sys.exit(1)
PY
  n=0; for f in "$W"/ls? "$W"/a/cat? "$W"/a/b/date?; do has_sframe "$f" && n=$((n + 1)); done
  [ $n = 9 ] && ok || fail "walk: $n of 9 converted"
else
  echo "note: no strace: the order of the walk is not checked"
fi

echo "tree_leftovers: $checks passed, $fails failed"
[ $fails -eq 0 ]
