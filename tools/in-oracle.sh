#!/usr/bin/env bash
# Run a command inside the oracle chroot (tools/make-oracle.sh builds it).
#   tools/in-oracle.sh CMD [ARG...]
# The repo is bind-mounted at its own path, so paths under it mean the same
# inside and out; so is every directory in $IN_ORACLE_BIND (colon-separated,
# e.g. a scratch dir under /tmp). /proc and /dev are mounted too. All mounts
# live in a private mount namespace (unshare -m) and vanish when the command
# ends: nothing to clean up, safe to run several at once. The command starts
# in the current directory when that exists inside, else in /.
# Exit status: the command's; 77 when the chroot is missing (test skip code).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
dir=${ORACLE_DIR:-$repo/oracle/sid}
if [ ! -f "$dir/.eh2sframe-oracle-ok" ]; then
  echo "in-oracle: no oracle chroot at $dir (run: make oracle)" >&2
  exit 77
fi
[ $# -gt 0 ] || { echo "usage: in-oracle.sh CMD [ARG...]" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "in-oracle: must run as root" >&2; exit 2; }
binds=$repo${IN_ORACLE_BIND:+:$IN_ORACLE_BIND}
exec unshare --mount --propagation private -- /bin/sh -c '
  d=$1 binds=$2 cwd=$3; shift 3
  mount -t proc proc "$d/proc" || exit 125
  mount --rbind /dev "$d/dev" || exit 125
  IFS=:
  for b in $binds; do
    [ -n "$b" ] || continue
    mkdir -p "$d$b" && mount --bind "$b" "$d$b" || exit 125
  done
  unset IFS
  [ -d "$d$cwd" ] || cwd=/
  exec chroot "$d" /bin/sh -c "cd \"\$0\" && exec \"\$@\"" "$cwd" "$@"
' in-oracle "$dir" "$binds" "$PWD" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"
