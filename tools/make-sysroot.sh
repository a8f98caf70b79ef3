#!/usr/bin/env bash
# Build the root that `make check-system` converts as a whole: Debian 12
# (bookworm) minbase plus python3 with its regression tests
# (libpython3.11-testsuite), perl, gcc, gdb, git, coreutils and openssl,
# and libc6-dbg, whose separate debug files (/usr/lib/debug/.build-id)
# are the root's debug files that a tree conversion updates.
#
# Location: $SYSROOT_DIR, default <repo>/cache/sysroot/bookworm (git-ignored).
# Mirror:   $SYSROOT_MIRROR, default the first Debian archive URI found in
#           this machine's /etc/apt/sources.list* (as tools/make-oracle.sh).
# Idempotent: a complete root carries the marker file .eh2sframe-sysroot-ok;
# a root without it is treated as half-built, removed and rebuilt.
# Must run as root (debootstrap, chroot). The root itself is never changed
# after it is built: tests copy it or mount it read-only.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
dir=${SYSROOT_DIR:-$repo/cache/sysroot/bookworm}
marker=$dir/.eh2sframe-sysroot-ok
start=$SECONDS
pkgs=(python3 libpython3.11-testsuite perl gcc libc6-dev gdb git coreutils openssl libc6-dbg)

die() { echo "make-sysroot: error: $*" >&2; exit 1; }
say() { echo "make-sysroot: $*"; }
. "$repo/tools/chroot-lib.sh"

if [ -f "$marker" ]; then
  say "root ready at $dir ($(tr '\n' ' ' <"$marker"))"
  exit 0
fi
[ "$(id -u)" = 0 ] || die "must run as root (debootstrap and chroot need it)"

mirror=${SYSROOT_MIRROR:-$(find_mirror || true)}
[ -n "$mirror" ] || die "no Debian archive URI in /etc/apt/sources.list*; set SYSROOT_MIRROR"

need_debootstrap

if [ -e "$dir" ]; then
  say "removing incomplete root $dir"
  unmount_all
  rm -rf --one-file-system "$dir" || die "cannot remove $dir"
fi
mkdir -p "$(dirname "$dir")"

log=$(mktemp /tmp/make-sysroot.XXXXXX.log)
say "debootstrap --variant=minbase bookworm from $mirror into $dir (log: $log)"
if ! debootstrap --variant=minbase bookworm "$dir" "$mirror" >"$log" 2>&1; then
  tail -n 30 "$log" >&2
  [ -f "$dir/debootstrap/debootstrap.log" ] && tail -n 30 "$dir/debootstrap/debootstrap.log" >&2
  die "debootstrap failed (see $log)"
fi

cp -L /etc/resolv.conf "$dir/etc/resolv.conf" 2>/dev/null || true
# debootstrap writes no /etc/hosts; python3's test_ssl binds to localhost.
[ -e "$dir/etc/hosts" ] || printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' >"$dir/etc/hosts"
cat >"$dir/etc/apt/apt.conf.d/99eh2sframe" <<'EOF'
APT::Install-Recommends "false";
APT::Install-Suggests "false";
EOF
say "installing: ${pkgs[*]}"
in_chroot apt-get update -qq >>"$log" 2>&1 || { tail -n 30 "$log" >&2; die "apt-get update failed in the root"; }
in_chroot apt-get install -y -qq "${pkgs[@]}" >>"$log" 2>&1 ||
  { tail -n 30 "$log" >&2; die "apt-get install failed in the root"; }
in_chroot apt-get clean >/dev/null 2>&1 || true
rm -rf "$dir"/var/lib/apt/lists/* 2>/dev/null || true

# The pieces the tests rely on.
in_chroot sh -c 'python3 -c "import test.support, test.test_json" && perl -MTest::More -e1 &&
  command -v prove gcc gdb git openssl >/dev/null && ls /usr/lib/debug/.build-id | grep -q .' >>"$log" 2>&1 ||
  { tail -n 10 "$log" >&2; die "the root lacks a program or test package the workload needs"; }

ver() { in_chroot dpkg-query -W -f='${Version}' "$1" 2>/dev/null; }
{
  for p in libc6 python3.11 perl gcc-12 gdb git openssl; do echo "$p=$(ver "$p")"; done
  echo "built=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
} >"$marker.tmp"
mv "$marker.tmp" "$marker"
rm -f "$log"
say "done in $((SECONDS - start))s: $(tr '\n' ' ' <"$marker")"
