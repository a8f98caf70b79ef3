#!/usr/bin/env bash
# Programs and shared libraries that read themselves (issue 17): a
# converted file must behave as the original even when its code reads
# its own notes, .interp or dynamic symbol table -- through symbols and
# data pointers that the conversion cannot see, and through the program
# headers and .dynamic, which it updates. corpus/selfref/ has the sources
# (prog.c, lib.c loaded by loader.c; one line of output per read).
#
# Built at test time for x86-64 (native), AArch64 with 64 KiB and with
# 4 KiB pages and s390x (under qemu-user): programs as PIE, non-PIE,
# static and static-pie, with -z pack-relative-relocs (RELR) and with the
# code layout that is not the target's default (-z noseparate-code on
# x86-64, -z separate-code elsewhere); shared libraries loaded by an
# unconverted loader. Reads ("variant"):
#   headers   no note of its own: everything below, which only headers
#             reach (the layout may move the loader's sections)
#   symbol    the custom note through its symbol (plus, in every build,
#             the notes through PT_NOTE and __ehdr_start, .interp through
#             PT_INTERP, .dynsym through _DYNAMIC and PT_DYNAMIC)
#   pointer   the custom note through a pointer in the data (a RELA or
#             RELR relocation in PIE, static-pie and libraries, an
#             absolute address in non-PIE and static programs)
#   interp    .interp through a symbol of the file's own in .interp (the
#             library variant has an entry point: the libc.so.6 case)
# Each build: the original runs twice (tests/e2e/lib/behave.sh: output
# that is not reproducible is reported, not compared), then the output of
# `eh2sframe IN -o OUT` must be the same, `eh2sframe --verify OUT` must
# pass, PT_GNU_SFRAME must cover exactly .sframe (check_layout), and in
# the running program (static ones too) or library dl_iterate_phdr must
# show a PT_GNU_SFRAME whose bytes start with the SFrame magic (0xdee2 in
# the file's byte order; the "sframe " lines, not compared). Prints a table
# (target, link kind, variant, layout `-v` names, result) and fails if any
# build behaves differently or fails a check. Combinations the toolchain
# cannot build (RELR in ld 2.40 for AArch64/s390x, static-pie without
# rcrt1.o) are listed as not buildable; a missing compiler or qemu (make
# deps installs them) is a failure, so the verdict is the same on every
# machine. SELFREF_JOBS sets the parallelism (default: the CPU count).
set -u
cd "$(dirname "$0")/../.."
. tests/e2e/lib/elfpatch_lib.sh
. tests/e2e/lib/behave.sh
[ -x "$E2S" ] || { echo "no eh2sframe binary"; exit 77; }
[ "$(uname -m)" = x86_64 ] || { echo "not an x86-64 host"; exit 77; }
T=$(mktemp -d /tmp/selfref.XXXXXX)
trap 'rm -rf "$T"' EXIT
S=$PWD/corpus/selfref
JOBS=${SELFREF_JOBS:-$(nproc)}
CFLAGS=(-O2 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes)
start=$SECONDS

# ---- targets and rows -------------------------------------------------------
TARGETS="x86-64 aarch64/64k aarch64/4k s390x"
# target NAME: sets cc, run (runner command; empty: native), page
# (link flags of the page size), code (the non-default code layout) and
# codename.
target() {
  case $1 in
    x86-64) cc=gcc run= page=() code=-Wl,-z,noseparate-code codename=noseparate-code ;;
    aarch64/*)
      cc=aarch64-linux-gnu-gcc run="qemu-aarch64 -L /usr/aarch64-linux-gnu"
      code=-Wl,-z,separate-code codename=separate-code
      if [ "$1" = aarch64/4k ]; then page=(-Wl,-z,max-page-size=4096 -Wl,-z,common-page-size=4096)
      else page=(-Wl,-z,max-page-size=65536); fi ;;
    s390x) cc=s390x-linux-gnu-gcc run="qemu-s390x -L /usr/s390x-linux-gnu" page=()
      code=-Wl,-z,separate-code codename=separate-code ;;
  esac
}
# KIND VARIANT OPTION (- none, relr, code) of every target.
ROWS="pie headers -
pie headers relr
no-pie headers -
static headers -
static-pie headers -
shared headers -
pie symbol -
pie symbol relr
pie symbol code
pie pointer -
pie pointer relr
pie interp -
no-pie symbol -
no-pie symbol relr
no-pie symbol code
no-pie pointer -
no-pie interp -
static symbol -
static symbol code
static pointer -
static-pie symbol -
static-pie symbol relr
static-pie pointer -
static-pie pointer relr
shared symbol -
shared symbol relr
shared pointer -
shared pointer relr
shared interp -"

missing=()
for t in $TARGETS; do
  target "$t"
  for c in $cc ${run%% *}; do
    command -v "$c" >/dev/null || missing+=("$c")
  done
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "FAIL: missing $(printf '%s\n' "${missing[@]}" | sort -u | tr '\n' ' ')(make deps installs them)"
  exit 1
fi

# ---- one build --------------------------------------------------------------
# sr_run FILE: run FILE in its directory (under $run); its whole output
# goes to FILE.out, standard output gets it without the "sframe " lines
# (PT_GNU_SFRAME appears by design).
sr_run() {
  (cd "${1%/*}" && timeout 20 $run "./${1##*/}") >"$1.out" 2>&1
  local rc=$?
  grep -v '^sframe ' "$1.out"
  return $rc
}
# sr_runlib LIB: the unconverted loader of the target loads ./LIB.
sr_runlib() {
  (cd "${1%/*}" && timeout 20 $run "$loader" "./${1##*/}") >"$1.out" 2>&1
  local rc=$?
  grep -v '^sframe ' "$1.out"
  return $rc
}

# row DIR TARGET KIND VARIANT OPTION: build, convert, check and run one
# combination; writes DIR/row (the table's fields, tab-separated), DIR/diff
# (how the output differed) and DIR/fail (failed checks).
row() {
  local d=$1 t=$2 kind=$3 variant=$4 opt=$5 f=() name=prog out
  target "$t"
  mkdir -p "$d/orig" "$d/conv"
  case $kind in
    pie) f=(-fPIE -pie) ;;
    no-pie) f=(-fno-pie -no-pie) ;;
    static) f=(-static) ;;
    static-pie) f=(-static-pie) ;;
    shared) f=(-fPIC -shared) name=libselfref.so ;;
  esac
  case $kind in static|shared) ;; *) f+=(-Wl,--export-dynamic-symbol=sr_exported) ;; esac
  case $variant in
    pointer) f+=(-DNOTE_PTR) ;;
    headers) f+=(-DHEADERS_ONLY) ;;
    interp) f+=(-DOWN_INTERP); [ $kind = shared ] && f+=(-Wl,-e,selfref_lib_entry) ;;
  esac
  local label=$variant
  case $opt in
    relr) f+=(-Wl,-z,pack-relative-relocs); label="$variant, relr" ;;
    code) f+=("$code"); label="$variant, $codename" ;;
  esac
  [ $variant = pointer ] && case $kind:$opt in
    no-pie:*|static:*) label="pointer (absolute)" ;;
    *:relr) label="pointer (RELR)" ;;
    *) label="pointer (RELA)" ;;
  esac
  local src=$S/prog.c
  [ $kind = shared ] && src=$S/lib.c
  local res= layout=- checks=
  put() { printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$t" "$kind" "$label" "$layout" "$res" "$checks" >"$d/row"; }
  # What the toolchain cannot build (probed once per target).
  local no=
  [ $opt = relr ] && [ -e "${d%/*}/no-relr" ] && no=${d%/*}/no-relr
  [ $kind = static-pie ] && [ -e "${d%/*}/no-static-pie" ] && no=${d%/*}/no-static-pie
  if [ -n "$no" ]; then
    res="not buildable: $(cat "$no")"
    put; return
  fi
  if ! $cc "${CFLAGS[@]}" "${page[@]}" "${f[@]}" -o "$d/orig/$name" "$src" >"$d/build.log" 2>&1; then
    res="BUILD FAILED"; echo "build: $(grep -m1 -i error "$d/build.log")" >"$d/fail"
    put; return
  fi
  if grep -q 'pack-relative-relocs ignored' "$d/build.log"; then
    res="BUILD FAILED"; echo "build: -z pack-relative-relocs ignored, but not in the probe" >"$d/fail"
    put; return
  fi
  if ! "$E2S" -v "$d/orig/$name" -o "$d/conv/$name" >"$d/convert.log" 2>&1; then
    res="CONVERSION FAILED"; echo "eh2sframe: $(tail -1 "$d/convert.log")" >"$d/fail"
    put; return
  fi
  layout=$(sed -n 's/.*; program headers \(.*\)/\1/p' "$d/convert.log" |
             sed 's/ bytes of sections after them moved/ B moved/; s/contents moved \([0-9]*\) bytes/\1 B shift/')
  [ -n "$layout" ] || layout="(nothing converted)"
  local runner=sr_run bad=()
  [ $kind = shared ] && runner=sr_runlib
  behave $runner "$d/orig/$name" "$d/conv/$name"
  local rc=$?
  # The original must read itself correctly, or the comparison says
  # nothing.
  local must='note via symbol: selfref:'
  [ $variant = headers ] && must='build-id'
  if [ $rc != 2 ] && { [ $BEH_RC != 0 ] || ! grep -q "$must" <<<"$BEH_OUT" ||
       grep -q -e '\\x' -e DIFFERS -e 'bad note' <<<"$BEH_OUT"; }; then
    bad+=("the original does not read itself (exit $BEH_RC): $(grep -m1 -e '\\x' -e DIFFERS -e 'bad note' <<<"$BEH_OUT")")
  fi
  case $rc in
    0) res=same ;;
    1) res=DIFFERENT
       { [ "$BEH_RC" = "$BEH_GRC" ] || echo "exit status $BEH_RC, converted $BEH_GRC"
         diff <(printf '%s\n' "$BEH_OUT") <(printf '%s\n' "$BEH_GOT") | grep '^[<>] ' | head -6 | cut -c1-150
       } >"$d/diff" ;;
    *) res="not reproducible, not compared"; echo "$BEH_WHY" >"$d/diff" ;;
  esac
  # Checks of the converted file.
  "$E2S" --verify "$d/conv/$name" >"$d/verify.log" 2>&1 || bad+=("--verify: $(tail -1 "$d/verify.log")")
  out=$(check_layout "$d/conv/$name") || bad+=("layout: ${out#*: }")
  local who=main mem
  [ $kind = shared ] && who=libselfref.so
  mem=$(sed -n "s/^sframe $who: //p" "$d/conv/$name.out")
  checks="verify, segment, in memory ok"
  case $mem in ok*) ;; *) bad+=("dl_iterate_phdr: PT_GNU_SFRAME ${mem:-not listed}") ;; esac
  if [ ${#bad[@]} -gt 0 ]; then
    checks="FAILED: $(printf '%s; ' "${bad[@]}")"
    printf '%s\n' "${bad[@]}" >"$d/fail"
  fi
  put
}

# ---- the loaders and probes, then every row, JOBS at a time --------------
# prepare TARGET DIR: build the loader; record what the toolchain cannot
# build: RELR (binutils 2.40 links it for x86-64 only and ignores
# -z pack-relative-relocs elsewhere), static-pie (needs glibc's rcrt1.o).
prepare() {
  target "$1"
  local d=$2
  $cc "${CFLAGS[@]}" "${page[@]}" -o "$d/loader" "$S/loader.c"
  echo 'int main(void) { return 0; }' >"$d/probe.c"
  $cc -Wl,-z,pack-relative-relocs -o "$d/probe" "$d/probe.c" >"$d/probe.log" 2>&1
  grep -q 'pack-relative-relocs ignored' "$d/probe.log" &&
    echo "${cc%gcc}ld ignores -z pack-relative-relocs" >"$d/no-relr"
  if ! $cc -static-pie -o "$d/probe" "$d/probe.c" >"$d/probe.log" 2>&1; then
    # Any other failure fails every static-pie row.
    grep -q 'cannot find rcrt1.o' "$d/probe.log" &&
      echo "no rcrt1.o (this glibc has no static-pie)" >"$d/no-static-pie"
  fi
}
running=0
spawn() {
  "$@" &
  running=$((running + 1))
  if [ $running -ge "$JOBS" ]; then wait -n; running=$((running - 1)); fi
}
for t in $TARGETS; do
  mkdir -p "$T/${t//\//-}"
  spawn prepare "$t" "$T/${t//\//-}"
done
wait; running=0
dirs=()
for t in $TARGETS; do
  loader=$T/${t//\//-}/loader
  [ -x "$loader" ] || { fail "$t: cannot build the loader"; continue; }
  while read -r kind variant opt; do
    d=$T/${t//\//-}/$kind-$variant-$opt
    dirs+=("$d")
    spawn row "$d" "$t" "$kind" "$variant" "$opt"
  done <<<"$ROWS"
done
wait

# ---- the table --------------------------------------------------------------
printf '%-12s %-10s %-28s %-36s %s\n' target kind variant layout result
n=0 same=0 differ=0 unrepro=0 nobuild=0
for d in "${dirs[@]}"; do
  [ -e "$d/row" ] || { fail "${d#$T/}: no result (the job died)"; continue; }
  IFS=$'\t' read -r t kind label layout res checks <"$d/row"
  printf '%-12s %-10s %-28s %-36s %s\n' "$t" "$kind" "$label" "$layout" "$res${checks:+ [$checks]}"
  case $res in
    same) n=$((n + 1)); same=$((same + 1)) ;;
    DIFFERENT) n=$((n + 1)); differ=$((differ + 1)) ;;
    not\ reproducible*) n=$((n + 1)); unrepro=$((unrepro + 1)) ;;
    not\ buildable*) nobuild=$((nobuild + 1)) ;;
  esac
  if [ -s "$d/diff" ]; then sed "s|^|    |" "$d/diff"; fi
  if [ -s "$d/fail" ]; then
    while read -r m; do fail "$t $kind $label: $m"; done <"$d/fail"
  fi
done
[ $differ = 0 ] || fail "$differ of $n builds behave differently after the conversion"
echo "$n builds run: $same same, $differ DIFFERENT, $unrepro not reproducible (not compared); $nobuild not buildable; $((SECONDS - start)) s"
echo "failures: $fails"
[ $fails = 0 ]
