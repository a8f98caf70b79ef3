#!/usr/bin/env bash
# Build the SFrame interoperability oracle: a Debian sid chroot with
# binutils 2.47 (as --gsframe, ld, objdump/readelf --sframe), libsframe +
# sframe-api.h, gcc/g++ and cross binutils for aarch64 and s390x.
#
# Location: $ORACLE_DIR, default <repo>/oracle/sid (git-ignored).
# Mirror:   $ORACLE_MIRROR, default the first Debian archive URI found in this
#           machine's /etc/apt/sources.list*.
# Idempotent: a complete chroot carries the marker file .eh2sframe-oracle-ok;
# a chroot without it is treated as half-built, removed and rebuilt.
# Must run as root (debootstrap, chroot). Use tools/in-oracle.sh to run in it.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
dir=${ORACLE_DIR:-$repo/oracle/sid}
marker=$dir/.eh2sframe-oracle-ok
start=$SECONDS

die() { echo "make-oracle: error: $*" >&2; exit 1; }
say() { echo "make-oracle: $*"; }
. "$repo/tools/chroot-lib.sh"

if [ -f "$marker" ]; then
  say "oracle chroot ready at $dir ($(tr '\n' ' ' <"$marker"))"
  exit 0
fi
[ "$(id -u)" = 0 ] || die "must run as root (debootstrap and chroot need it)"

mirror=${ORACLE_MIRROR:-$(find_mirror || true)}
[ -n "$mirror" ] || die "no Debian archive URI in /etc/apt/sources.list*; set ORACLE_MIRROR"

need_debootstrap

# A half-built chroot: its mounts undone, removed.
if [ -e "$dir" ]; then
  say "removing incomplete chroot $dir"
  unmount_all
  rm -rf --one-file-system "$dir" || die "cannot remove $dir"
fi
mkdir -p "$(dirname "$dir")"

log=$(mktemp /tmp/make-oracle.XXXXXX.log)
say "debootstrap sid from $mirror into $dir (log: $log)"
if ! debootstrap --variant=minbase sid "$dir" "$mirror" >"$log" 2>&1; then
  tail -n 30 "$log" >&2
  [ -f "$dir/debootstrap/debootstrap.log" ] && tail -n 30 "$dir/debootstrap/debootstrap.log" >&2
  die "debootstrap failed (see $log)"
fi

# apt inside the chroot: the sid Release may be past Valid-Until by this
# machine's clock.
cp -L /etc/resolv.conf "$dir/etc/resolv.conf" 2>/dev/null || true
cat >"$dir/etc/apt/apt.conf.d/99eh2sframe" <<'EOF'
Acquire::Check-Valid-Until "false";
APT::Install-Recommends "false";
APT::Install-Suggests "false";
EOF
say "apt-get update"
in_chroot apt-get -o Acquire::Check-Valid-Until=false update -qq >>"$log" 2>&1 ||
  { tail -n 30 "$log" >&2; die "apt-get update failed in the chroot"; }

# The package shipping sframe-api.h: libsframe-dev where it exists, else
# binutils-dev (which also ships ansidecl.h, needed by sframe-api.h).
pkgs=(binutils binutils-dev gcc g++ libc6-dev binutils-aarch64-linux-gnu binutils-s390x-linux-gnu file elfutils)
for p in libsframe-dev lld; do
  if in_chroot apt-cache show "$p" >/dev/null 2>&1; then pkgs+=("$p"); fi
done
say "installing: ${pkgs[*]}"
in_chroot apt-get -o Acquire::Check-Valid-Until=false install -y -qq "${pkgs[@]}" >>"$log" 2>&1 ||
  { tail -n 30 "$log" >&2; die "apt-get install failed in the chroot"; }
in_chroot apt-get clean >/dev/null 2>&1 || true

# Verify the pieces the tests rely on before declaring success.
in_chroot sh -c 'printf "f:\n.cfi_startproc\nret\n.cfi_endproc\n" | as --gsframe -o /tmp/t.o - &&
  objdump --sframe /tmp/t.o | grep -q "SFRAME_VERSION_3" && rm -f /tmp/t.o' >>"$log" 2>&1 ||
  die "as --gsframe / objdump --sframe (SFrame V3) not working in the chroot"
hdr=$(in_chroot sh -c 'ls /usr/include/sframe-api.h' 2>/dev/null) || die "sframe-api.h missing in the chroot"
in_chroot sh -c 'printf "#include <sframe-api.h>\nint main(void){int e=0;return sframe_decode(0,0,&e)!=0;}\n" >/tmp/t.c &&
  gcc -o /tmp/t /tmp/t.c -lsframe && rm -f /tmp/t /tmp/t.c' >>"$log" 2>&1 ||
  die "cannot link a program against libsframe in the chroot"
for t in aarch64-linux-gnu s390x-linux-gnu; do
  in_chroot sh -c "command -v $t-objdump" >/dev/null || die "$t-objdump missing in the chroot"
done

ver() { in_chroot sh -c "$1" 2>/dev/null | head -n 1; }
{
  echo "binutils=$(ver 'dpkg-query -W -f="\${Version}" binutils')"
  echo "gcc=$(ver 'gcc -dumpfullversion')"
  echo "libsframe=$(ver 'dpkg-query -S /usr/include/sframe-api.h | cut -d: -f1')"
  echo "built=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
} >"$marker.tmp"
mv "$marker.tmp" "$marker"
rm -f "$log"
say "done in $((SECONDS - start))s: $(tr '\n' ' ' <"$marker") ($hdr)"
