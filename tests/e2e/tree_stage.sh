#!/usr/bin/env bash
# Tree mode replaces files a batch at a time: converted files are staged
# next to their originals, the filesystem is synced once, then they are
# renamed over them. Checked here from outside (strace, cmp, readelf):
#   - a run leaves no staged or temporary file behind, each converted
#     file has .sframe, runs, and no file is fsync'ed alone (one syncfs
#     per filesystem and batch, before any rename over an original);
#   - a file that fails leaves its original and nothing staged;
#   - SIGTERM in the middle, with one worker (-j 1) and with worker
#     processes (-j 2): every file is its original or converted (never
#     half-written, never missing), nothing staged remains, and the
#     process ends by the signal;
#   - a worker process killed in the middle (-j 2): the file it was
#     converting fails by name, the others are converted, nothing staged
#     remains.
set -u
cd "$(dirname "$0")/../.."
E2S=${E2S:-$PWD/eh2sframe}
[ -x "$E2S" ] || { echo "no eh2sframe binary"; exit 77; }
T=$(mktemp -d /tmp/tree_stage.XXXXXX)
trap 'rm -rf "$T"' EXIT
fails=0 checks=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { checks=$((checks + 1)); }
progs=(/usr/bin/ls /usr/bin/cat /usr/bin/date /usr/bin/sort)

# leftovers DIR: staged or temporary files of ours.
leftovers() { find "$1" -name '.e2stage.*' -o -name '.*.e2s*' | wc -l; }

# ---- a normal run, traced
mkdir -p "$T/a/sub"
for p in "${progs[@]}"; do cp "$p" "$T/a/"; cp "$p" "$T/a/sub/"; done
printf 'not elf\n' >"$T/a/README"
if command -v strace >/dev/null; then
  strace -f -qq -e trace=fsync,fdatasync,syncfs,rename -o "$T/trace" \
    "$E2S" -q --in-place -r -j 2 "$T/a" || fail "run: exit $?"
  python3 - "$T/trace" "$T/a" <<'PY' && ok || fail "sync order (see above)"
import re, sys
lines = open(sys.argv[1]).read().splitlines()
root = sys.argv[2]
synced, bad = False, 0
for l in lines:
    if re.search(r"\bf(data)?sync\(", l):
        print("fsync of one file:", l); bad += 1
    if "syncfs(" in l and "= 0" in l:
        synced = True
    m = re.search(r'rename\("([^"]+)", "([^"]+)"\)', l)
    if m and "/.e2stage." in m.group(1) and "/.e2stage." not in m.group(2):
        if not synced:
            print("rename over an original before any syncfs:", l); bad += 1
n = sum(1 for l in lines if re.search(r'rename\("[^"]*/\.e2stage\.[^"]*", "[^"]*"\)', l))
if n != 8:
    print("renames of staged files over originals: %d, want 8" % n); bad += 1
sys.exit(1 if bad else 0)
PY
else
  "$E2S" -q --in-place -r -j 2 "$T/a" || fail "run: exit $?"
  echo "note: no strace (tools/install-deps.sh installs it): the sync order is not checked"
fi
[ "$(leftovers "$T/a")" = 0 ] && ok || fail "left behind: $(find "$T/a" -name '.*')"
for f in "$T"/a/ls "$T"/a/sub/sort; do
  LC_ALL=C readelf -SW "$f" | grep -q ' \.sframe ' && ok || fail "$f not converted"
  "$f" --version >/dev/null && ok || fail "$f does not run"
done
cmp -s "$T/a/README" <(printf 'not elf\n') && ok || fail "README changed"

# ---- a program with a separate debug file (split as dh_strip does): the
# debug file is rewritten after the program is first renamed, never before (an
# interrupted batch would leave it describing a file that was not
# replaced), and the two match afterwards (eu-unstrip pairs them).
mkdir -p "$T/d/usr/bin"
cp /usr/bin/ls "$T/d/usr/bin/ls"
id=$(readelf -n "$T/d/usr/bin/ls" | sed -n 's/.*Build ID: //p')
dbg=$T/d/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
mkdir -p "${dbg%/*}"
objcopy --only-keep-debug "$T/d/usr/bin/ls" "$dbg"
strip --remove-section=.gnu_debuglink "$T/d/usr/bin/ls"
objcopy --add-gnu-debuglink "$dbg" "$T/d/usr/bin/ls"
if command -v strace >/dev/null; then
  strace -f -qq -e trace=rename -o "$T/dtrace" "$E2S" -q --in-place -r "$T/d" ||
    fail "debug tree: exit $?"
  python3 - "$T/dtrace" <<'PY' && ok || fail "debug file order (see above)"
import re, sys
order = []
for l in open(sys.argv[1]):
    m = re.search(r'rename\("[^"]+", "([^"]+)"\)', l)
    if m and not re.search(r"/\.e2stage\.[^/]*$", m.group(1)):
        order.append(m.group(1))
prog = [i for i, f in enumerate(order) if f.endswith("/usr/bin/ls")]
dbg = [i for i, f in enumerate(order) if f.endswith(".debug")]
# (the program is renamed again after its debug file: its .gnu_debuglink
# CRC follows the new debug file)
if not prog or not dbg or min(prog) > min(dbg):
    print("renames, in order:", order); sys.exit(1)
PY
else
  "$E2S" -q --in-place -r "$T/d" || fail "debug tree: exit $?"
fi
if command -v eu-unstrip >/dev/null; then
  eu-unstrip -o "$T/ls.whole" "$T/d/usr/bin/ls" "$dbg" 2>"$T/unstrip.err" && ok ||
    fail "eu-unstrip cannot pair the converted file and its debug file: $(cat "$T/unstrip.err")"
fi

# ---- a file that fails (a truncated ELF file) among good ones
mkdir -p "$T/b"
cp /usr/bin/ls "$T/b/good"
head -c 3000 /usr/bin/cat >"$T/b/broken"
cp "$T/b/broken" "$T/broken.orig"
"$E2S" -q --in-place -r "$T/b" 2>"$T/b.err"; rc=$?
[ $rc = 1 ] && ok || fail "a failed file: exit $rc, want 1"
grep -q "broken" "$T/b.err" && ok || fail "no message names the failed file: $(cat "$T/b.err")"
cmp -s "$T/b/broken" "$T/broken.orig" && ok || fail "the failed file changed"
LC_ALL=C readelf -SW "$T/b/good" | grep -q ' \.sframe ' && ok || fail "good file not converted"
[ "$(leftovers "$T/b")" = 0 ] && ok || fail "left behind after a failure"

# ---- SIGTERM in the middle of a run
# check_tree DIR LABEL: each file its original or converted (and runs);
# sets conv and orig.
check_tree() {
  conv=0 orig=0
  for f in "$1"/*; do
    b=$(basename "$f")
    if cmp -s "$f" "$1.orig/$b"; then orig=$((orig + 1))
    elif LC_ALL=C readelf -SW "$f" 2>/dev/null | grep -q ' \.sframe ' && "$f" --version >/dev/null 2>&1; then conv=$((conv + 1))
    else fail "$2: $b is neither its original nor a converted file that runs"; fi
  done
  [ $((conv + orig)) = 240 ] && ok || fail "$2: files: $conv converted + $orig original, want 240"
  [ "$(leftovers "$1")" = 0 ] && ok || fail "$2: left behind: $(find "$1" -name '.*' | head -3)"
}
# wait_staged DIR: until the first file is staged (the batch is under way).
wait_staged() {
  for _ in $(seq 1 500); do
    [ -n "$(find "$1" -name '.e2stage.*' -print -quit)" ] && break
    sleep 0.01
  done
}
for j in 1 2; do
  d=$T/c$j
  mkdir -p "$d"
  for i in $(seq 1 60); do for p in "${progs[@]}"; do cp "$p" "$d/$(basename "$p").$i"; done; done
  cp -r "$d" "$d.orig"
  "$E2S" -q --in-place -r -j $j "$d" 2>"$d.err" &
  pid=$!
  wait_staged "$d"
  kill -TERM $pid 2>/dev/null
  wait $pid; rc=$?
  check_tree "$d" "SIGTERM -j $j"
  if [ $rc = 143 ]; then
    ok; echo "interrupted (-j $j): $conv converted, $orig as they were"
  elif [ $rc = 0 ]; then
    echo "note: the run (-j $j) ended before SIGTERM came ($conv converted)"
  else
    fail "after SIGTERM (-j $j): exit $rc, want 143 (killed by the signal): $(cat "$d.err")"
  fi
done

# ---- a worker process killed in the middle of a run
# Killed while it writes a staged file (stopped first, then the one with
# a staged file open is killed), so that it leaves one half written.
d=$T/k
mkdir -p "$d"
for i in $(seq 1 60); do for p in "${progs[@]}"; do cp "$p" "$d/$(basename "$p").$i"; done; done
cp -r "$d" "$d.orig"
"$E2S" -q --in-place -r -j 2 "$d" 2>"$d.err" &
pid=$!
victim=
for _ in $(seq 1 300); do
  ws=$(pgrep -P $pid)
  [ -n "$ws" ] || { sleep 0.01; continue; }
  kill -STOP $ws 2>/dev/null
  for w in $ws; do
    ls -l /proc/$w/fd 2>/dev/null | grep -q '/\.e2stage\.' && { victim=$w; break; }
  done
  [ -n "$victim" ] && kill -KILL $victim
  kill -CONT $ws 2>/dev/null
  [ -n "$victim" ] && break
  sleep 0.005
done
wait $pid; rc=$?
check_tree "$d" "worker killed"
if [ -z "$victim" ]; then
  echo "note: no worker process caught writing a staged file (the run was over)"
elif [ $orig = 1 ] && [ $rc = 1 ] && grep -q "worker process was killed by signal 9" "$d.err"; then
  ok; echo "worker killed: $conv converted, $orig failed: $(head -n1 "$d.err")"
else
  fail "worker killed: exit $rc, $orig files not converted (want 1, and exit 1 naming it): $(cat "$d.err")"
fi

echo "tree_stage: $checks checks passed, $fails failed"
[ $fails -eq 0 ]
