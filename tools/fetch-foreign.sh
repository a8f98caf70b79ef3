#!/usr/bin/env bash
# Fetch Debian binary packages of other architectures (default arm64 and
# s390x) and unpack them, for the cross-ABI CFI tests:
#   cache/foreign/<arch>/root/...   (dpkg-deb -x of each package)
# Packages: libc6 libstdc++6 libgcc-s1 zlib1g coreutils (override: PKGS=).
# Needs the foreign architecture in dpkg (added here as root if missing;
# idempotent) and apt lists for it. Cached: once an arch is unpacked,
# a later run does nothing. Exit 77 if apt/network/root is unavailable, so
# tests that need these files skip instead of failing.
# Usage: tools/fetch-foreign.sh [arch...]   (prints the root dir per arch)
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
cache=${FOREIGN_CACHE:-$here/cache/foreign}
archs=("$@")
[ ${#archs[@]} -gt 0 ] || archs=(arm64 s390x)
read -r -a pkgs <<<"${PKGS:-libc6 libstdc++6 libgcc-s1 zlib1g coreutils}"

skip() { echo "fetch-foreign: $*; skipping" >&2; exit 77; }
for t in apt-get dpkg dpkg-deb apt-cache; do
  command -v "$t" >/dev/null || skip "$t not found"
done
sig=$(echo "${pkgs[*]}" | tr ' ' ,)

updated=0
for arch in "${archs[@]}"; do
  dir=$cache/$arch
  if [ -e "$dir/.done" ] && [ "$(cat "$dir/.done")" = "$sig" ]; then
    echo "$dir/root"
    continue
  fi
  if ! dpkg --print-foreign-architectures | grep -qx "$arch" &&
     [ "$(dpkg --print-architecture)" != "$arch" ]; then
    [ "$(id -u)" = 0 ] || skip "need root to add dpkg architecture $arch"
    dpkg --add-architecture "$arch" || skip "dpkg --add-architecture $arch failed"
  fi
  # apt lists for this arch: update once per run if a package has no candidate.
  if ! apt-cache policy "libc6:$arch" 2>/dev/null | grep -q 'Candidate: [0-9]'; then
    if [ $updated = 0 ]; then
      [ "$(id -u)" = 0 ] || skip "need root for apt-get update"
      apt-get update -qq >/dev/null 2>&1 || skip "apt-get update failed"
      updated=1
    fi
    apt-cache policy "libc6:$arch" | grep -q 'Candidate: [0-9]' ||
      skip "no $arch packages in apt lists"
  fi
  rm -rf "$dir"
  mkdir -p "$dir/debs" "$dir/root"
  specs=()
  for p in "${pkgs[@]}"; do specs+=("$p:$arch"); done
  (cd "$dir/debs" && apt-get download -qq "${specs[@]}" >/dev/null 2>&1) ||
    { rm -rf "$dir"; skip "apt-get download for $arch failed"; }
  for deb in "$dir"/debs/*.deb; do
    dpkg-deb -x "$deb" "$dir/root" || { rm -rf "$dir"; skip "dpkg-deb -x $deb failed"; }
  done
  echo "$sig" >"$dir/.done"
  echo "$dir/root"
done
