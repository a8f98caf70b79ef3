#!/usr/bin/env bash
# glibc's own SFrame Version 2 reader and stack walker against our
# --sframe-version=2 output. glibc 2.42 added an SFrame walker to
# backtrace() (configure --enable-sframe) that reads V2 only; when it
# cannot follow a stack to its end it throws the trace away and falls back
# to the DWARF unwinder.
#
# glibc's code is fetched at test time, never committed: `apt-get source
# --tar-only glibc` (2.42 or newer) from Debian sid, in the oracle chroot
# of `make oracle` (private sources list and apt lists: the chroot's own
# apt state is left alone), else with the host's apt-get, the chroot's
# keys and the same mirror. Only the SFrame files are kept, in
# cache/glibc-sframe/ (git-ignored): later runs need no network.
# tests/consumers/glibc_sframe/ compiles sysdeps/generic/sframe-read.c and
# sframe.c with a shim of ours (the file mapped like ld.so, our answer to
# _dl_find_object) into glibc_check, for x86-64 natively and for AArch64
# with the cross compiler under qemu-aarch64. Per converted file it checks
# every FRE start and 3 PCs per DWARF row: glibc's lookup must succeed and
# one walker step must give the caller readelf's DWARF rows give; at
# outermost frames (RA undefined: _start, the clone/clone3 child) the walk
# must end through glibc's own test. Files: ls, libc.so.6, python3.11,
# ld.so and a multi-threaded program built here (static, so clone3 and
# start_thread are in it); AArch64: libc.so.6, ld.so, a PAC-signed static
# multi-threaded program, and arm64 ls when cache/foreign has it.
# What glibc's AArch64 walker cannot do by design (RA still in LR; signed
# RAs) is printed per file as glibc_limits, not failed.
# Skips (77) without root/oracle chroot and no cached source, or when the
# source cannot be fetched; the AArch64 half is skipped (said so) without
# aarch64-linux-gnu-gcc or qemu-aarch64.
set -u
cd "$(dirname "$0")/../.."
root=$PWD
E2S=$root/eh2sframe
T=$root/tests/consumers/glibc_sframe
[ -x "$E2S" ] || { echo "skip: no ./eh2sframe (make all)"; exit 77; }
cache=${GLIBC_SFRAME_CACHE:-$root/cache/glibc-sframe}
oracle_dir=${ORACLE_DIR:-$root/oracle/sid}
tmp=$(mktemp -d /tmp/glibc-v2.XXXXXX)
chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# The files glibc_check is built from, below the source tree's root.
need="sysdeps/generic/sframe-read.c sysdeps/generic/sframe-read.h
 sysdeps/generic/sframe.c sysdeps/generic/sframe.h
 sysdeps/unix/sysv/linux/x86_64/uw-sigframe.h
 sysdeps/unix/sysv/linux/aarch64/uw-sigframe.h
 sysdeps/unix/sysv/linux/aarch64/kernel_rt_sigframe.h"

# apt-get options for a private deb-src list under $1 (a path as apt sees it).
apt_opts() {
  echo "-q -o Dir::Etc::SourceList=$1/src.list -o Dir::Etc::SourceParts=/nonexistent" \
       "-o Dir::State::Lists=$1/lists -o Dir::Cache=$1/cache -o Acquire::Check-Valid-Until=false" \
       "-o APT::Sandbox::User=root"
}

# The chroot's mirror, as a deb-src line for sid.
src_line() {
  local m
  m=$(awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; exit } }' \
        "$oracle_dir/etc/apt/sources.list" 2>/dev/null)
  echo "deb-src ${1:-}${m:-http://deb.debian.org/debian} sid main"
}

# Fetch glibc's orig tarball into $tmp/dl; 0 when it is there.
fetch_tarball() {
  mkdir -p "$tmp/dl/lists/partial" "$tmp/dl/cache/archives/partial"
  src_line >"$tmp/dl/src.list"
  # 1. inside the oracle chroot
  if [ -f "$oracle_dir/.eh2sframe-oracle-ok" ] && [ "$(id -u)" = 0 ]; then
    IN_ORACLE_BIND=$tmp tools/in-oracle.sh sh -c "cd $tmp/dl &&
      apt-get $(apt_opts "$tmp/dl") update && apt-get $(apt_opts "$tmp/dl") source --download-only --tar-only glibc" \
      >"$tmp/dl/log" 2>&1
    ls "$tmp"/dl/glibc_*.orig.tar.* >/dev/null 2>&1 && return 0
    echo "note: apt-get source in the oracle chroot failed ($(tail -n 1 "$tmp/dl/log")); trying the host's apt-get"
  fi
  # 2. the host's apt-get with the chroot's archive keys
  command -v apt-get >/dev/null || return 1
  local keys=$oracle_dir/etc/apt/trusted.gpg.d
  [ -d "$keys" ] || return 1
  (cd "$tmp/dl" && apt-get $(apt_opts "$tmp/dl") -o Dir::Etc::TrustedParts="$keys" update &&
     apt-get $(apt_opts "$tmp/dl") -o Dir::Etc::TrustedParts="$keys" source --download-only --tar-only glibc) \
    >>"$tmp/dl/log" 2>&1
  ls "$tmp"/dl/glibc_*.orig.tar.* >/dev/null 2>&1
}

# Unpack the needed files from the tarball into $cache/glibc-VERSION.
unpack() {
  python3 - "$1" "$cache" $need <<'EOF'
import os, sys, tarfile
tarball, cache, need = sys.argv[1], sys.argv[2], sys.argv[3:]
with tarfile.open(tarball) as t:
    top = None
    for m in t:
        if top is None:
            top = m.name.split("/")[0]
        rel = m.name[len(top) + 1:]
        if rel in need:
            dst = os.path.join(cache, "new", rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            with open(dst, "wb") as f:
                f.write(t.extractfile(m).read())
missing = [n for n in need if not os.path.exists(os.path.join(cache, "new", n))]
if missing:
    sys.exit("glibc source lacks " + " ".join(missing))
print(top)
EOF
}

src=
if [ -f "$cache/current" ] && [ -f "$cache/$(cat "$cache/current")/.ok" ]; then
  src=$cache/$(cat "$cache/current")
else
  mkdir -p "$cache" || { echo "skip: cannot create $cache"; exit 77; }
  exec 9>"$cache/.lock" && flock 9
  if ! fetch_tarball; then
    echo "skip: cannot fetch glibc's source (needs the oracle chroot of 'make oracle', run as root,"
    echo "      and network access to the Debian archive once; it is then kept in $cache)"
    [ -f "$tmp/dl/log" ] && tail -n 3 "$tmp/dl/log"
    exit 77
  fi
  tarball=$(ls "$tmp"/dl/glibc_*.orig.tar.* | head -n 1)
  rm -rf "$cache/new"
  top=$(unpack "$tarball") || { fail "cannot unpack $tarball"; exit 1; }
  rm -rf "${cache:?}/$top" && mv "$cache/new" "$cache/$top" && touch "$cache/$top/.ok" &&
    echo "$top" >"$cache/current"
  src=$cache/$top
  echo "fetched $(basename "$tarball"); kept $(echo $need | wc -w) files in $src"
fi
ver=${src##*/glibc-}
case $ver in
  2.[0-9]|2.[0-9].*|2.[1-3][0-9]|2.[1-3][0-9].*|2.4[01]|2.4[01].*)
    fail "glibc $ver has no SFrame walker (2.42 or newer needed)"; exit 1 ;;
esac
echo "glibc $ver: sysdeps/generic/sframe-read.c, sframe.c"

# build ARCH CC [LDFLAGS]: build/glibc_sframe/ARCH/glibc_check
build() {
  local arch=$1 cc=$2 ldf=${3:-} b=$root/build/glibc_sframe/$1 f
  local inc="-include $T/shim/glibc_shim.h -I $T/shim"
  mkdir -p "$b"
  for f in sframe-read sframe; do
    # glibc's code: its own warnings are not ours to fix
    $cc -O2 -std=gnu11 -D_GNU_SOURCE -w $inc -I "$src/sysdeps/unix/sysv/linux/$arch" \
      -I "$src/sysdeps/generic" -c "$src/sysdeps/generic/$f.c" -o "$b/$f.o" || return 1
  done
  $cc -O2 -std=gnu11 -Wall -Wextra -Werror $inc -I "$src/sysdeps/generic" \
    -c "$T/glibc_check.c" -o "$b/glibc_check.o" &&
    $cc $ldf -o "$b/glibc_check" "$b/glibc_check.o" "$b/sframe-read.o" "$b/sframe.o"
}

declare -A tot
sfsize() { echo $((16#$(readelf -SW "$1" | awk '$2 == ".sframe" { print $6 }'))); }
# check LABEL FILE RUNNER...: convert FILE to V2, run glibc_check on it.
check() {
  local lab=$1 f=$2 out sum k; shift 2
  [ -f "$f" ] || { echo "$lab: $f missing, not checked"; return; }
  if ! "$E2S" -q --sframe-version=2 "$f" -o "$tmp/$lab.v2" 2>"$tmp/$lab.err"; then
    fail "$lab: conversion: $(head -n 2 "$tmp/$lab.err")"; return
  fi
  # The default output shares identical frame-row lists (little-endian
  # targets): counted against --no-share-fres, checked at the end.
  if "$E2S" -q --sframe-version=2 --no-share-fres "$f" -o "$tmp/$lab.v2u" 2>/dev/null; then
    tot[sframe]=$(( ${tot[sframe]:-0} + $(sfsize "$tmp/$lab.v2") ))
    tot[unshared]=$(( ${tot[unshared]:-0} + $(sfsize "$tmp/$lab.v2u") ))
    rm -f "$tmp/$lab.v2u"
  fi
  python3 "$T/dwarf_rows.py" "$tmp/$lab.v2" >"$tmp/$lab.rows" || { fail "$lab: dwarf_rows.py"; return; }
  out=$("$@" "$tmp/$lab.v2" "$tmp/$lab.rows" 2>&1)
  local rc=$?
  sum=$(echo "$out" | grep '^summary:')
  echo "$lab: ${sum#summary: }"
  [ $rc = 0 ] || { fail "$lab: glibc_check exit $rc"; echo "$out" | grep -v '^summary:' | head -n 8; }
  for k in failed_lookups walker_disagreements points outermost outermost_ended ra_in_lr mangled_ra_fres; do
    tot[$k]=$(( ${tot[$k]:-0} + $(echo "$sum" | sed -n "s/.* $k=\([0-9]*\).*/\1/p" | head -n 1) + 0 ))
  done
}

# x86-64
if build x86_64 gcc; then
  gcc -O2 -pthread -static -o "$tmp/mt-static" "$T/mt.c" || fail "build the multi-threaded program"
  chk=$root/build/glibc_sframe/x86_64/glibc_check
  check ls /usr/bin/ls "$chk"
  check libc.so.6 /lib/x86_64-linux-gnu/libc.so.6 "$chk"
  check python3.11 /usr/bin/python3.11 "$chk"
  check ld.so /lib64/ld-linux-x86-64.so.2 "$chk"
  check mt-static "$tmp/mt-static" "$chk"
else
  fail "cannot build glibc_check for x86-64"
fi

# AArch64, under qemu-user
if command -v aarch64-linux-gnu-gcc >/dev/null && command -v qemu-aarch64 >/dev/null; then
  if build aarch64 aarch64-linux-gnu-gcc -static; then
    aarch64-linux-gnu-gcc -O2 -pthread -static -mbranch-protection=pac-ret \
      -o "$tmp/a64-mt-static" "$T/mt.c" || fail "cross-build the multi-threaded program"
    chk="qemu-aarch64 $root/build/glibc_sframe/aarch64/glibc_check"
    sys=/usr/aarch64-linux-gnu/lib
    check a64-libc.so.6 $sys/libc.so.6 $chk
    check a64-ld.so $sys/ld-linux-aarch64.so.1 $chk
    check a64-mt-static "$tmp/a64-mt-static" $chk
    [ -f cache/foreign/arm64/root/bin/ls ] && check a64-ls cache/foreign/arm64/root/bin/ls $chk
  else
    fail "cannot build glibc_check for AArch64"
  fi
else
  echo "AArch64: skipped (no aarch64-linux-gnu-gcc or qemu-aarch64)"
fi

echo "total: points=${tot[points]:-0} failed_lookups=${tot[failed_lookups]:-0}" \
     "walker_disagreements=${tot[walker_disagreements]:-0} outermost=${tot[outermost]:-0}" \
     "outermost_ended=${tot[outermost_ended]:-0} | glibc AArch64 limits: ra_in_lr=${tot[ra_in_lr]:-0}" \
     "mangled_ra_fres=${tot[mangled_ra_fres]:-0}"
echo "default (shared) .sframe: ${tot[sframe]:-0} bytes; unshared (--no-share-fres): ${tot[unshared]:-0}"
[ "${tot[sframe]:-0}" -lt "${tot[unshared]:-0}" ] || fail "the default output is not the shared layout"
[ $fails -eq 0 ]
