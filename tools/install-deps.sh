#!/usr/bin/env bash
# Install what eh2sframe needs from Debian packages; only missing ones.
set -euo pipefail
pkgs=(
  build-essential clang lld libelf-dev elfutils libdwarf-dev dwarfdump binutils
  gcc-aarch64-linux-gnu g++-aarch64-linux-gnu
  gcc-s390x-linux-gnu g++-s390x-linux-gnu
  qemu-user debootstrap libclang-rt-14-dev file python3 util-linux
  debhelper dpkg-dev rpm pkg-config groff-base man-db fakeroot gdb
)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "installing: ${missing[*]}"
if [ "$(id -u)" != 0 ]; then SUDO=sudo; else SUDO=; fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
