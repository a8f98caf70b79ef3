#!/usr/bin/env bash
# Convert linked x86-64 files (system programs and libraries, our own
# PIE / non-PIE / static / static-pie / C++ programs), then check the
# layout with readelf, eu-elflint against the input, byte preservation,
# that they run with the same output (natively and under qemu-x86_64,
# whose loader takes AT_PHDR = bias + e_phoff; the original runs twice
# first, tests/e2e/lib/behave.sh), and that a program finds its own SFrame
# through dl_iterate_phdr.
set -u
cd "$(dirname "$0")/../.."
. tests/e2e/lib/elfpatch_lib.sh
. tests/e2e/lib/behave.sh
[ -x "$E2S" ] || { echo "no eh2sframe binary"; exit 77; }
T=$(mktemp -d /tmp/elfpatch_linked.XXXXXX)
trap 'rm -rf "$T"' EXIT
C=corpus/elfpatch
patched=0 ran=0 qran=0 lint=0

# convert IN OUT: convert + layout + lint + preservation checks.
convert() {
  if ! "$E2S" -q "$1" -o "$2"; then fail "convert $1"; return 1; fi
  check_layout "$2" || { fail "layout $2"; return 1; }
  lint_same "$1" "$2" && lint=$((lint + 1)) || fail "elflint $2"
  preserved "$1" "$2" || fail "bytes of $1 changed"
  patched=$((patched + 1))
}
# Runners for behave (standard output and exit status are compared).
native() { "$@" 2>/dev/null; }
underqemu() { qemu-x86_64 "$@" 2>/dev/null; }
# compare RUNNER ORIG PATCHED ARGS...: behave, counted in ran or qran.
compare() {
  local r=$1 what=$3 rc
  [ $r = underqemu ] && what="$what under qemu-x86_64"
  behave "$@"; rc=$?
  behave_count "$what" $rc
  case $rc in
    0) if [ $r = underqemu ]; then qran=$((qran + 1)); else ran=$((ran + 1)); fi ;;
    1) fail "run $what: $BEH_WHY" ;;
  esac
}
# runboth ORIG PATCHED ARGS...: natively, then under qemu-x86_64.
runboth() {
  compare native "$@"
  command -v qemu-x86_64 >/dev/null && compare underqemu "$@"
}

# System programs.
cp /bin/ls "$T/ls"; convert "$T/ls" "$T/ls.sf" && runboth "$T/ls" "$T/ls.sf" -la /usr/share
cp /usr/bin/bash "$T/bash"; convert "$T/bash" "$T/bash.sf" &&
  runboth "$T/bash" "$T/bash.sf" -c 'for i in 1 2 3; do echo $((i*i)); done; exit 4'
if [ -x /usr/bin/python3.11 ]; then
  cp /usr/bin/python3.11 "$T/py"; convert "$T/py" "$T/py.sf" &&
    runboth "$T/py" "$T/py.sf" -c 'import json,threading; print(json.dumps({"a":[1,2]})); raise SystemExit(5)'
fi
if [ -x /usr/bin/gdb ]; then
  cp /usr/bin/gdb "$T/gdb"; convert "$T/gdb" "$T/gdb.sf" &&
    compare native "$T/gdb" "$T/gdb.sf" -nx --batch -ex 'print 6*7'
fi
# Shared libraries: load patched libc and libstdc++ in place of the real ones.
mkdir -p "$T/lib"
for l in /lib/x86_64-linux-gnu/libc.so.6 /usr/lib/x86_64-linux-gnu/libstdc++.so.6; do
  cp -L "$l" "$T/$(basename "$l").orig"
  convert "$T/$(basename "$l").orig" "$T/lib/$(basename "$l")"
done

# Our programs.
cc=gcc
$cc -O2 -o "$T/hello" $C/hello.c
$cc -O2 -no-pie -o "$T/hello-nopie" $C/hello.c
$cc -O2 -static -o "$T/hello-static" $C/hello.c
$cc -O2 -static-pie -o "$T/hello-spie" $C/hello.c
g++ -O2 -pthread -o "$T/exc" $C/exc.cc
g++ -O2 -static -pthread -o "$T/exc-static" $C/exc.cc
for p in hello hello-nopie hello-static hello-spie; do
  convert "$T/$p" "$T/$p.sf" && runboth "$T/$p" "$T/$p.sf" zeta alpha mu
done
for p in exc exc-static; do
  convert "$T/$p" "$T/$p.sf" && runboth "$T/$p" "$T/$p.sf"
done
# The patched libstdc++ with the patched exception program, the patched
# ls with the patched libc (the originals on the system's libraries).
patchedlibs() {
  case $1 in
    *.sf) LD_LIBRARY_PATH=$T/lib "$@" 2>&1 ;;
    *) "$@" 2>&1 ;;
  esac
}
compare patchedlibs "$T/exc" "$T/exc.sf"
compare patchedlibs /bin/ls "$T/ls.sf" -la /usr/share

# dl_iterate_phdr finds PT_GNU_SFRAME of the executable and of a
# dlopen'ed patched library, and the mapped bytes equal the file's.
$cc -O2 -shared -fPIC -o "$T/libplug.so.orig" $C/libplug.c
convert "$T/libplug.so.orig" "$T/libplug.so"
for v in "" -no-pie -static-pie; do
  $cc -O2 $v -o "$T/selfcheck$v" $C/selfcheck.c -ldl 2>/dev/null
  convert "$T/selfcheck$v" "$T/selfcheck$v.sf" || continue
  out=$("$T/selfcheck$v.sf" "$T/libplug.so"); rc=$?
  want="plug_add(40) = 42"
  if [ -z "$v" ] || [ "$v" = -no-pie ]; then
    echo "$out" | grep -q '^main: PT_GNU_SFRAME matches the file$' &&
    echo "$out" | grep -q '^libplug.so: PT_GNU_SFRAME matches the file$' &&
    echo "$out" | grep -q "^$want\$" && [ $rc = 0 ] && ran=$((ran + 1)) ||
      { fail "selfcheck$v"; echo "$out"; }
  fi
  # With the patched libc too: three objects.
  out=$(LD_LIBRARY_PATH=$T/lib "$T/selfcheck.sf" "$T/libplug.so" 2>&1)
done
echo "$out" | grep -q '^libc.so.6: PT_GNU_SFRAME matches the file$' || { fail "selfcheck with patched libc"; echo "$out"; }
$cc -O2 -static -o "$T/selfcheck-static" $C/selfcheck.c 2>/dev/null
convert "$T/selfcheck-static" "$T/selfcheck-static.sf" && {
  out=$("$T/selfcheck-static.sf"); echo "$out" | grep -q '^main: PT_GNU_SFRAME matches the file$' &&
    ran=$((ran + 1)) || { fail "static selfcheck"; echo "$out"; }
  out=$(qemu-x86_64 "$T/selfcheck-static.sf"); echo "$out" | grep -q '^main: PT_GNU_SFRAME matches the file$' &&
    qran=$((qran + 1)) || { fail "static selfcheck under qemu"; echo "$out"; }
}

# Determinism, an existing .sframe, --force, --in-place.
"$E2S" -q "$T/hello" -o "$T/hello.sf2" && cmp -s "$T/hello.sf" "$T/hello.sf2" || fail "output not deterministic"
cp "$T/hello.sf" "$T/again"
msg=$("$E2S" "$T/again" -o "$T/again2" 2>&1); rc=$?
[ $rc = 0 ] && echo "$msg" | grep -q 'already has .sframe' && cmp -s "$T/again" "$T/again2" || fail "existing .sframe: $msg"
"$E2S" -q --force --in-place "$T/again" && cmp -s "$T/again" "$T/hello.sf" || fail "--force rebuild in old space"
cp "$T/hello" "$T/inplace"; chmod 751 "$T/inplace"
"$E2S" -q --in-place "$T/inplace" && cmp -s "$T/inplace" "$T/hello.sf" &&
  [ "$(stat -c %a "$T/inplace")" = 751 ] || fail "--in-place"
if "$E2S" --verify "$T/hello.sf" 2>&1 | grep -q 'not implemented'; then
  echo "verify: not implemented, skipped"
else
  nv=0
  for f in ls.sf bash.sf hello.sf hello-static.sf exc.sf lib/libc.so.6; do
    "$E2S" --verify "$T/$f" >/dev/null 2>&1 && nv=$((nv + 1)) || fail "--verify $f"
  done
  echo "verify passed: $nv"
fi

behave_report
echo "x86-64: patched $patched files, elflint-clean $lint, ran $ran natively and $qran under qemu-x86_64 with identical output, failures $fails"
[ $fails = 0 ]
