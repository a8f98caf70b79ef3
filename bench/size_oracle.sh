#!/usr/bin/env bash
# Size and coverage against the reference assembler: build real code bases
# in the sid chroot (binutils 2.47, gcc 16) twice -- with -Wa,--gsframe
# (gas writes .sframe, ld merges it) and without (then eh2sframe adds
# .sframe) -- and compare .sframe bytes and FDE/FRE counts, all read back
# by binutils' own `readelf --sframe`.
#   bench/size_oracle.sh WORKDIR
# Sources: Debian source packages zlib, lz4, fmtlib (orig tarballs fetched
# with `apt-get source --download-only` inside the chroot, private apt
# lists under WORKDIR so the chroot is not modified), plus corpus/.
# Built binaries are cached in WORKDIR; sizes are recomputed every run.
# Writes WORKDIR/sizes.tsv. Exit 77 when the chroot is missing.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
w=$(mkdir -p "$1" && cd "$1" && pwd)
ino() { IN_ORACLE_BIND=$w "$repo/tools/in-oracle.sh" "$@"; }
say() { echo "size_oracle: $*" >&2; }
[ -f "$repo/oracle/sid/.eh2sframe-oracle-ok" ] || { say "no oracle chroot (make oracle): skipped"; exit 77; }

# ---- sources ------------------------------------------------------------
mkdir -p "$w/apt/lists/partial" "$w/apt/cache/archives/partial" "$w/src"
have() { compgen -G "$w/src/$1" >/dev/null; }
if ! have 'zlib_*.orig.tar.*' || ! have 'lz4_*.orig.tar.*' || ! have 'fmtlib_*.orig.tar.*'; then
  # The chroot's own archive (make-oracle.sh took it from this machine's apt sources).
  uri=$(awk '$1 == "deb" { print $2; exit }' "$repo/oracle/sid/etc/apt/sources.list")
  [ -n "$uri" ] || { say "no archive URI in the chroot's sources.list: skipped"; exit 77; }
  echo "deb-src $uri sid main" >"$w/apt/sources.list"
  say "fetching zlib, lz4, fmtlib sources (apt-get source in the chroot)"
  # Partial failures (e.g. a .debian.tar 404 on the mirror) are fine as
  # long as the orig tarballs arrive.
  (cd "$w/src" && ino sh -c '
    A="-o Dir::Etc::SourceList=$0/apt/sources.list -o Dir::Etc::SourceParts=/nonexistent
       -o Dir::State::Lists=$0/apt/lists -o Dir::Cache=$0/apt/cache -o Acquire::Check-Valid-Until=false"
    apt-get $A update -qq >/dev/null 2>&1; apt-get $A source --download-only zlib lz4 fmtlib >/dev/null 2>&1; true' "$w") || true
fi
unpack() { # pkg dir
  local t
  t=$(compgen -G "$w/src/$1_*.orig.tar.*" | head -n1) || return 1
  [ -d "$w/src/$2" ] && return 0
  mkdir -p "$w/src/$2" && tar -xf "$t" -C "$w/src/$2" --strip-components=1
}
bases=()
unpack zlib zlib && bases+=(zlib) || say "zlib source unavailable"
unpack lz4 lz4 && bases+=(lz4) || say "lz4 source unavailable"
unpack fmtlib fmt && bases+=(fmt) || say "fmtlib source unavailable"
bases+=(corpus)
rm -rf "$w/src/corpus" && mkdir -p "$w/src/corpus" && cp -r "$repo/corpus/c" "$repo/corpus/cxx" "$repo/corpus/asm" "$w/src/corpus/"

# ---- builds (inside the chroot; both variants in parallel) -------------
cat >"$w/build.sh" <<'EOF'
# sh build.sh SRC OUT BASE FLAGS...: build one code base into OUT.
set -e
src=$1 out=$2 base=$3; shift 3
mkdir -p "$out"; cd "$src"
case $base in
zlib)
  set -- -DHAVE_UNISTD_H -DHAVE_STDARG_H "$@"
  gcc -O2 -fPIC -shared "$@" -o "$out/libz.so" adler32.c crc32.c deflate.c infback.c \
    inffast.c inflate.c inftrees.c trees.c zutil.c compress.c uncompr.c gzclose.c \
    gzlib.c gzread.c gzwrite.c
  gcc -O2 "$@" -I. -o "$out/minigzip" test/minigzip.c adler32.c crc32.c deflate.c \
    infback.c inffast.c inflate.c inftrees.c trees.c zutil.c compress.c uncompr.c \
    gzclose.c gzlib.c gzread.c gzwrite.c ;;
lz4)
  gcc -O2 "$@" -Ilib -o "$out/lz4" lib/*.c programs/*.c -lpthread ;;
fmt)
  g++ -O2 -fPIC -shared "$@" -Iinclude -o "$out/libfmt.so" src/format.cc src/os.cc ;;
corpus)
  # The repo's corpus program (as tools/build-corpus.sh, O2); -static
  # also pulls in libc.a objects, which were not assembled with --gsframe.
  gcc -std=gnu11 -O2 "$@" -c c/funcs.c -o "$out/funcs.o"
  g++ -std=gnu++17 -O2 "$@" -c cxx/classes.cpp -o "$out/classes.o"
  gcc "$@" -c asm/x86_64.S -o "$out/asm.o"
  g++ -o "$out/prog" "$out/classes.o" "$out/funcs.o" "$out/asm.o"
  g++ -static -o "$out/prog-static" "$out/classes.o" "$out/funcs.o" "$out/asm.o"
  rm -f "$out"/*.o ;;
esac
EOF
for b in "${bases[@]}"; do
  if [ -f "$w/build/$b/.ok" ] && [ "$b" != corpus ]; then continue; fi
  rm -rf "$w/build/$b"
  say "building $b twice in the chroot"
  ino sh "$w/build.sh" "$w/src/$b" "$w/build/$b/gas" "$b" -Wa,--gsframe >"$w/build-$b-gas.log" 2>&1 &
  p1=$!
  ino sh "$w/build.sh" "$w/src/$b" "$w/build/$b/plain" "$b" >"$w/build-$b-plain.log" 2>&1 &
  p2=$!
  if wait $p1 && wait $p2; then
    touch "$w/build/$b/.ok"
  else
    say "build of $b failed (logs: $w/build-$b-*.log)"; tail -n 5 "$w/build-$b-"*.log >&2
  fi
done

# ---- measure ------------------------------------------------------------
tsv=$w/sizes.tsv
printf 'base\tbinary\tvariant\teh_fdes\teh_bytes\thdr_bytes\tsframe_bytes\tsf_fdes\tsf_fres\tfile_bytes\tinst_bytes\tplain_bytes\tplain_inst\n' >"$tsv.tmp"
secsz() { local h; h=$(readelf -SW "$1" | awk -v n="$2" '{ for (i = 1; i < NF; i++) if ($i == n) { print $(i + 4); exit } }'); echo $((16#${h:-0})); }
for b in "${bases[@]}"; do
  [ -f "$w/build/$b/.ok" ] || continue
  for g in "$w/build/$b/gas"/*; do
    name=$(basename "$g") p=$w/build/$b/plain/$name e=$w/build/$b/plain/$name.e2s
    "$repo/eh2sframe" -q "$p" -o "$e" || { say "eh2sframe failed on $p"; continue; }
    # Installed size: what a package ships, stripped by the chroot's
    # strip (dh_strip); eh2sframe runs after it (contrib/debian/dh_sframe).
    ist=$w/inst/$b && mkdir -p "$ist"
    ino strip "$p" -o "$ist/$name.plain" && ino strip "$g" -o "$ist/$name.gas" &&
      "$repo/eh2sframe" -q "$ist/$name.plain" -o "$ist/$name.e2s" ||
      { say "strip failed on $name"; continue; }
    for v in gas e2s; do
      f=$g; [ $v = e2s ] && f=$e
      src=$g; [ $v = e2s ] && src=$p
      # binutils' decoder; if it fails (it has aborted on an assertion),
      # take the counts from our own --dump and flag them with '!'.
      hdr=$({ ino readelf --sframe "$f" 2>/dev/null || printf "\nFAILED\n"; } |
            awk '/Num FDEs:/ {f=$3} /Num FREs:/ {r=$3} /^FAILED/ {x=1} END {print f+0, r+0, x+0}')
      if [ "${hdr##* }" = 1 ]; then
        say "binutils readelf --sframe failed on $f"
        hdr=$("$repo/eh2sframe" --dump "$f" | awk '/Num FDEs:/ {f=$3} /Num FREs:/ {r=$3} END {print f "!", r "!"}')
      fi
      hdr=${hdr% [01]}
      fdes=$(readelf --debug-dump=frames "$src" 2>/dev/null | grep -c ' FDE cie=' || true)
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$b" "$name" "$v" "$fdes" \
        "$(secsz "$src" .eh_frame)" "$(secsz "$src" .eh_frame_hdr)" "$(secsz "$f" .sframe)" \
        ${hdr% *} ${hdr#* } "$(stat -c %s "$f")" "$(stat -c %s "$ist/$name.$v")" \
        "$(stat -c %s "$p")" "$(stat -c %s "$ist/$name.plain")" >>"$tsv.tmp"
    done
  done
done
mv "$tsv.tmp" "$tsv"
column -t "$tsv" >&2
