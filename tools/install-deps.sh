#!/usr/bin/env bash
# Install what eh2sframe needs from Debian packages; only missing ones.
# --distro: also what `make check-distro` needs (deb-src entries for
# apt-get source, the build dependencies of lz4).
set -euo pipefail
distro=
[ "${1:-}" = --distro ] && distro=1
if [ "$(id -u)" != 0 ]; then SUDO=sudo; else SUDO=; fi
arch=$(dpkg --print-architecture)
pkgs=(
  build-essential clang lld zlib1g-dev liblzma-dev xz-utils libelf-dev elfutils libdwarf-dev dwarfdump binutils
  gcc-aarch64-linux-gnu g++-aarch64-linux-gnu
  gcc-s390x-linux-gnu g++-s390x-linux-gnu
  qemu-user debootstrap libclang-rt-14-dev file python3 util-linux time
  debhelper dpkg-dev rpm pkg-config groff-base man-db fakeroot gdb
  kmod strace
  abigail-tools
)
# eco_kbuild: Debian's kernel headers (an out-of-tree module is built
# against them); the arm64 headers are downloaded by the test (apt-get
# download needs arm64 as a foreign architecture).
if [ "$arch" = amd64 ]; then
  pkgs+=(linux-headers-amd64 gcc-12-aarch64-linux-gnu)
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    $SUDO dpkg --add-architecture arm64
    need_update=1
  fi
fi

# check-distro: deb-src entries next to the deb ones (Debian 12 images
# ship without them), made from the configured Debian mirrors.
add_deb_src() {
  local f=/etc/apt/sources.list.d/eh2sframe-deb-src.sources
  [ -e "$f" ] && return 0
  if apt-get indextargets --format '$(CREATED_BY)' 2>/dev/null | grep -x Sources >/dev/null; then
    return 0
  fi
  python3 - "$f" <<'PY2'
import glob, re, sys
out = []
for path in sorted(glob.glob("/etc/apt/sources.list.d/*.sources")):
    for stanza in re.split(r"\n\s*\n", open(path).read()):
        fields = {}
        for line in stanza.splitlines():
            m = re.match(r"([A-Za-z-]+):\s*(.*)", line)
            if m:
                fields[m.group(1)] = m.group(2).strip()
        if "deb" in fields.get("Types", "").split() and "debian" in fields.get("URIs", ""):
            out.append("Types: deb-src\n" + "".join(
                f"{k}: {v}\n" for k, v in fields.items() if k != "Types"))
for path in ["/etc/apt/sources.list"] + sorted(glob.glob("/etc/apt/sources.list.d/*.list")):
    try:
        for line in open(path):
            if re.match(r"deb\s", line) and "debian" in line:
                parts = line.split()
                opts = parts[1] if parts[1].startswith("[") else ""
                rest = parts[2:] if opts else parts[1:]
                uri, suite, comps = rest[0], rest[1], rest[2:]
                out.append(f"Types: deb-src\nURIs: {uri}\nSuites: {suite}\nComponents: {' '.join(comps)}\n")
    except OSError:
        pass
if out:
    open(sys.argv[1], "w").write("\n".join(out))
PY2
  need_update=1
}
need_update=${need_update:-}
[ -n "$distro" ] && add_deb_src
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ] || [ -n "$need_update" ]; then
  $SUDO apt-get update -qq
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if [ -n "$distro" ]; then
  # lz4's build dependencies (only missing ones are installed).
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get build-dep -y -qq lz4 >/dev/null
fi
