#!/usr/bin/env bash
# A stripped program whose code reads a symbol of its own in .interp (as
# a runnable library does): the stripped file keeps no trace of that
# symbol, its separate debug file does. Converted with its debug file
# (--debug-file, and in tree mode by build ID under usr/lib/debug), the
# layout must not move .interp and the program must print the same; the
# debug file's .symtab is what shows it (README "What may move", rule 2).
# Without the debug file the rule cannot see the symbol: that case is
# printed (the documented limit), not asserted. x86-64 natively, AArch64
# under qemu-user.
set -u
cd "$(dirname "$0")/../.."
E2S=$PWD/eh2sframe
[ -x "$E2S" ] || { echo "no eh2sframe binary"; exit 77; }
. tests/e2e/lib/behave.sh
T=$(mktemp -d /tmp/selfref_debug.XXXXXX)
trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
interp_addr() { readelf -SW "$1" | awk '$2 == ".interp" { print $4 }'; }
# Runners (behave.sh): the "sframe" lines say whether PT_GNU_SFRAME is
# there, which the conversion changes on purpose.
r_native() { "$@" 2>/dev/null | grep -v '^sframe'; return "${PIPESTATUS[0]}"; }
r_aarch64() {
  qemu-aarch64 -L /usr/aarch64-linux-gnu "$@" 2>/dev/null | grep -v '^sframe'
  return "${PIPESTATUS[0]}"
}

for t in x86-64 aarch64; do
  case $t in
    x86-64) cc=gcc strip=strip objcopy=objcopy run=r_native ;;
    aarch64) cc=aarch64-linux-gnu-gcc strip=aarch64-linux-gnu-strip
      objcopy=aarch64-linux-gnu-objcopy run=r_aarch64 ;;
  esac
  d=$T/$t
  mkdir -p "$d"
  if ! $cc -O2 -Icorpus/selfref -DOWN_INTERP -DHEADERS_ONLY \
       -Wl,--export-dynamic-symbol=sr_exported corpus/selfref/prog.c -o "$d/p"; then
    fail "$t: cannot build"; continue
  fi
  # The split dh_strip makes.
  $objcopy --only-keep-debug "$d/p" "$d/p.debug" 2>/dev/null
  $strip --remove-section=.comment -o "$d/s" "$d/p"
  $objcopy --add-gnu-debuglink="$d/p.debug" "$d/s"
  id=$(readelf -nW "$d/s" | sed -n 's/.*Build ID: //p')
  # --in-place --debug-file, and tree mode finding it by build ID.
  cp "$d/s" "$d/a"; cp "$d/p.debug" "$d/a.debug"
  mkdir -p "$d/tree/usr/bin" "$d/tree/usr/lib/debug/.build-id/${id:0:2}"
  cp "$d/s" "$d/tree/usr/bin/prog"
  cp "$d/p.debug" "$d/tree/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug"
  "$E2S" -v --in-place --debug-file "$d/a.debug" "$d/a" 2>"$d/a.log" ||
    fail "$t: --debug-file conversion failed: $(cat "$d/a.log")"
  grep -q 'symbol of the debug file' "$d/a.log" ||
    fail "$t: -v does not say the debug file's symbol kept the sections in place"
  "$E2S" -v --in-place -r "$d/tree" >"$d/tree.log" 2>&1 ||
    fail "$t: tree conversion failed: $(cat "$d/tree.log")"
  for c in "$d/a" "$d/tree/usr/bin/prog"; do
    [ "$(interp_addr "$c")" = "$(interp_addr "$d/s")" ] ||
      fail "$t: ${c#$d/}: .interp moved although the debug file names a symbol in it"
    behave "$run" "$d/s" "$c"
    case $? in
      0) echo "$t ${c#$d/}: same as the original" ;;
      2) echo "$t ${c#$d/}: original not reproducible, not compared" ;;
      *) fail "$t: ${c#$d/}: prints differently: $BEH_WHY" ;;
    esac
    "$E2S" --verify "$c" >/dev/null 2>&1 || fail "$t: ${c#$d/}: --verify"
  done
  # Without its debug file (the limit, printed).
  cp "$d/s" "$d/n"
  "$E2S" -v "$d/n" -o "$d/n2" 2>&1 | grep -m1 'program headers' | sed "s|$d/||"
  behave "$run" "$d/s" "$d/n2"
  echo "$t without the debug file: $([ $? = 0 ] && echo same || echo differs: the limit README names)"
done
echo "failures: $fails"
[ $fails = 0 ]
