#!/usr/bin/env bash
# An SFrame V2 assembler for tests/e2e/interop_v2_object.sh: Debian trixie
# (binutils 2.44, whose `as --gsframe` writes SFrame version 2) in a
# minimal chroot, made once with debootstrap (about a minute).
#   tools/make-v2as.sh        prints the chroot's path; exit 77 when it
#                             cannot be made (no root, no network)
# Location: $V2AS_DIR, default <repo>/cache/v2as/trixie (git-ignored).
# Mirror: $V2AS_MIRROR, default the Debian archive this machine's apt uses.
set -u
repo=$(cd "$(dirname "$0")/.." && pwd)
dir=${V2AS_DIR:-$repo/cache/v2as/trixie}
marker=$dir/.eh2sframe-v2as-ok
skip() { echo "make-v2as: $*" >&2; exit 77; }
if [ -f "$marker" ]; then echo "$dir"; exit 0; fi
[ "$(id -u)" = 0 ] || skip "needs root (debootstrap)"
command -v debootstrap >/dev/null || skip "no debootstrap"
mirror=${V2AS_MIRROR:-$(apt-get indextargets --format '$(REPO_URI)' 2>/dev/null |
  grep -E '/debian/?$' | grep -v -e security -e ports | head -n 1)}
[ -n "$mirror" ] || skip "no Debian archive URI in apt's sources"
rm -rf --one-file-system "$dir"
mkdir -p "$(dirname "$dir")"
log=$(mktemp /tmp/make-v2as.XXXXXX.log)
debootstrap --variant=minbase --include=binutils trixie "$dir" "$mirror" >"$log" 2>&1 ||
  { tail -n 5 "$log" >&2; rm -rf --one-file-system "$dir"; skip "debootstrap trixie failed (see $log)"; }
# The one thing it is for: as --gsframe writing SFrame V2.
printf 'f:\n.cfi_startproc\nret\n.cfi_endproc\n' >"$dir/tmp/t.s"
chroot "$dir" as --gsframe -o /tmp/t.o /tmp/t.s >>"$log" 2>&1 &&
  chroot "$dir" objdump --sframe /tmp/t.o 2>/dev/null | grep -q 'SFRAME_VERSION_2' ||
  { rm -rf --one-file-system "$dir"; skip "trixie's as --gsframe does not write SFrame V2 (see $log)"; }
rm -f "$dir/tmp/t.s" "$dir/tmp/t.o" "$log"
chroot "$dir" dpkg-query -W -f='binutils=${Version}\n' binutils >"$marker"
echo "$dir"
