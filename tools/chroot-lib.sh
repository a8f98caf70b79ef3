# Shell functions tools/make-oracle.sh and tools/make-sysroot.sh share
# (sourced; the caller sets $dir, the chroot, and defines say and die).

# The Debian archive URI this machine already uses (deb822 .sources or
# one-line .list); security/updates-only repositories are skipped.
find_mirror() {
  local f
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
    [ -r "$f" ] || continue
    case "$f" in
      *.sources)
        awk 'BEGIN{IGNORECASE=1}
             /^URIs:/ { for (i = 2; i <= NF; i++) print $i }' "$f" ;;
      *)
        awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; break } }' "$f" ;;
    esac
  done | grep -E '/debian/?$' | grep -v -e security -e debian-ports | head -n 1
}

# debootstrap, installed when missing.
need_debootstrap() {
  command -v debootstrap >/dev/null 2>&1 && return 0
  say "installing debootstrap"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null 2>&1 ||
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null; } ||
    die "cannot install debootstrap"
}

# Undo any mounts left inside $dir (a half-built or interrupted chroot).
unmount_all() {
  local m
  for m in $(awk -v d="$dir" 'index($5, d "/") == 1 || $5 == d { print $5 }' /proc/self/mountinfo | sort -r); do
    umount -l "$m" 2>/dev/null || true
  done
}

# Run a command in $dir with /proc and /dev mounted in a private mount
# namespace only: nothing stays mounted when it ends.
in_chroot() {
  unshare --mount --propagation private -- sh -c '
    d=$1; shift
    mount -t proc proc "$d/proc" && mount --rbind /dev "$d/dev" &&
    exec chroot "$d" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
      LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"' sh "$dir" "$@"
}
