#!/usr/bin/env bash
# Fetch Debian binary packages of other architectures (default arm64 and
# s390x) and unpack them, for the cross-ABI CFI tests:
#   cache/foreign/<arch>/root/...   (dpkg-deb -x of each package)
# Packages: libc6 libstdc++6 libgcc-s1 zlib1g coreutils (override: PKGS=).
# --corpus adds the larger set of tools/corpus-check.sh (about 55 MB of
# .debs per arch, most of it libllvm15).
# Needs the foreign architecture in dpkg (added here as root if missing;
# idempotent) and apt lists for it. Cached per package: a package already
# unpacked is not fetched again, so a later run with the same (or a
# smaller) list does nothing. Exit 77 if apt/network/root is unavailable,
# so tests that need these files skip instead of failing.
# SUITE=trixie (any Debian suite name) fetches that suite's packages
# instead, into cache/foreign/<arch>-<suite>/root, with apt state of its
# own under cache/foreign/apt-<suite>-<arch> (the host's apt sources and
# dpkg architectures are left alone); DEBIAN_MIRROR overrides the mirror.
# Usage: tools/fetch-foreign.sh [--corpus] [arch...]   (prints the root dir per arch)
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
cache=${FOREIGN_CACHE:-$here/cache/foreign}
base="libc6 libstdc++6 libgcc-s1 zlib1g coreutils"
# Debian 12 packages with plenty of code, present for arm64 and s390x:
# C, C++ (LLVM, gdb, boost), hand-written assembly (OpenSSL, gmp,
# sanitizer runtime), interpreters.
corpus="libssl3 openssl libsqlite3-0 python3.11-minimal bash perl-base
 libglib2.0-0 libxml2 libgnutls30 libkrb5-3 libcurl4 libzstd1 liblzma5
 libsystemd0 util-linux gdb libgmp10 libmpfr6 libgfortran5 libgomp1
 libasan8 libdw1 libelf1 libpcre2-8-0 libunistring2 libx11-6
 libfreetype6 libbinutils libboost-regex1.74.0 libllvm15"
list=$base
if [ "${1:-}" = --corpus ]; then
  list="$base $corpus"
  shift
fi
archs=("$@")
[ ${#archs[@]} -gt 0 ] || archs=(arm64 s390x)
read -r -a pkgs <<<"$(echo ${PKGS:-$list})"

skip() { echo "fetch-foreign: $*; skipping" >&2; exit 77; }
for t in apt-get dpkg dpkg-deb apt-cache; do
  command -v "$t" >/dev/null || skip "$t not found"
done
mkdir -p "$cache" || skip "cannot create $cache"
# Tests may run this at the same time: one fetch at a time.
if command -v flock >/dev/null; then
  exec 9>"$cache/.lock" && flock 9
fi

suite=${SUITE:-}
case $suite in *[!a-z0-9-]*) skip "bad SUITE '$suite'" ;; esac
updated=0
for arch in "${archs[@]}"; do
  dir=$cache/$arch${suite:+-$suite}
  apt=()
  if [ -n "$suite" ]; then
    # Another suite: its own sources list, lists and cache, this arch only.
    sd=$cache/apt-$suite-$arch
    mkdir -p "$sd/lists/partial" "$sd/cache/archives/partial" "$sd/prefs" ||
      skip "cannot create $sd"
    echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] ${DEBIAN_MIRROR:-http://deb.debian.org/debian} $suite main" >"$sd/sources.list"
    apt=(-o Dir::Etc::sourcelist="$sd/sources.list" -o Dir::Etc::sourceparts="$sd/none"
         -o Dir::Etc::preferencesparts="$sd/prefs" -o Dir::State::Lists="$sd/lists"
         -o Dir::Cache="$sd/cache" -o APT::Architecture="$arch" -o APT::Architectures="$arch")
    updated=0
  fi
  # .done lists the unpacked packages (comma-separated, any order).
  have=","
  [ -e "$dir/.done" ] && have=",$(cat "$dir/.done"),"
  missing=()
  for p in "${pkgs[@]}"; do
    case $have in *",$p,"*) ;; *) missing+=("$p") ;; esac
  done
  if [ ${#missing[@]} -eq 0 ]; then
    echo "$dir/root"
    continue
  fi
  if [ -z "$suite" ] && ! dpkg --print-foreign-architectures | grep -qx "$arch" &&
     [ "$(dpkg --print-architecture)" != "$arch" ]; then
    [ "$(id -u)" = 0 ] || skip "need root to add dpkg architecture $arch"
    dpkg --add-architecture "$arch" || skip "dpkg --add-architecture $arch failed"
  fi
  # apt lists for this arch: update once per run if a package has no candidate.
  if ! apt-cache "${apt[@]}" policy "libc6:$arch" 2>/dev/null | grep -q 'Candidate: [0-9]'; then
    if [ $updated = 0 ]; then
      [ "$(id -u)" = 0 ] || skip "need root for apt-get update"
      apt-get "${apt[@]}" update -qq >/dev/null 2>&1 || skip "apt-get update failed"
      updated=1
    fi
    apt-cache "${apt[@]}" policy "libc6:$arch" | grep -q 'Candidate: [0-9]' ||
      skip "no $arch packages in apt lists"
  fi
  # No .done: a partial earlier run; start over.
  [ -e "$dir/.done" ] || rm -rf "$dir"
  new=$dir/debs/new
  rm -rf "$new"
  mkdir -p "$new" "$dir/root"
  specs=()
  for p in "${missing[@]}"; do specs+=("$p:$arch"); done
  (cd "$new" && apt-get "${apt[@]}" download -qq "${specs[@]}" >/dev/null 2>&1) ||
    { rm -rf "$new"; skip "apt-get download for $arch failed"; }
  for deb in "$new"/*.deb; do
    dpkg-deb -x "$deb" "$dir/root" || { rm -rf "$dir"; skip "dpkg-deb -x $deb failed"; }
    mv "$deb" "$dir/debs/"
  done
  rmdir "$new"
  done_list=${have#,}
  done_list=${done_list%,}
  for p in "${missing[@]}"; do done_list=${done_list:+$done_list,}$p; done
  echo "$done_list" >"$dir/.done"
  echo "$dir/root"
done
