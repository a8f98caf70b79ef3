#!/usr/bin/env bash
# A file converted in place (--in-place, tree mode) keeps what it carries
# beyond its bytes: owner, set-user-ID / set-group-ID bits (a chown
# clears them, even root's), file capabilities and other extended
# attributes (a rename drops them with the old inode). Read back with
# stat and Python's os.getxattr, not with our code; the programs still run.
set -u
cd "$(dirname "$0")/../.."
E2S=${E2S:-$PWD/eh2sframe}
[ -x "$E2S" ] || { echo "no eh2sframe binary"; exit 77; }
T=$(mktemp -d /tmp/inplace_attrs.XXXXXX)
trap 'rm -rf "$T"' EXIT
fails=0 checked=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
root=0; [ "$(id -u)" = 0 ] && root=1

# Capability sets of a vfs_cap_data (revision 2): cap_net_raw, effective.
cap=$(python3 -c "import struct; print(struct.pack('<IIIII',0x02000001,1<<13,0,0,0).hex())")

# setup DIR: three programs with special modes, owners and attributes.
setup() {
  mkdir -p "$1/sub"
  cp /usr/bin/ls "$1/suid" && chmod 4755 "$1/suid"
  cp /usr/bin/ls "$1/sub/sgid" && chmod 2750 "$1/sub/sgid"
  cp /usr/bin/ls "$1/caps" && chmod 0755 "$1/caps"
  python3 - "$1" "$cap" "$root" <<'PY' || return 1
import os, sys
d, cap, root = sys.argv[1], bytes.fromhex(sys.argv[2]), sys.argv[3] == "1"
for f, v in (("suid", b"one"), ("sub/sgid", b"two"), ("caps", b"three")):
    os.setxattr(os.path.join(d, f), "user.e2s_test", v)
if root:
    os.setxattr(os.path.join(d, "caps"), "security.capability", cap)
    # a signature of the old bytes (IMA): not to be carried over
    os.setxattr(os.path.join(d, "suid"), "security.ima", b"\x03\x02\x04old")
    os.chown(os.path.join(d, "suid"), 1, 1)
    os.chown(os.path.join(d, "sub/sgid"), 2, 2)
    # chown cleared the bits: set again
    os.chmod(os.path.join(d, "suid"), 0o4755)
    os.chmod(os.path.join(d, "sub/sgid"), 0o2750)
PY
}

# attrs FILE: mode, owner and every extended attribute but IMA's
# signature (which must not survive a change of bytes: checked below).
attrs() {
  python3 - "$1" <<'PY'
import os, stat, sys
f = sys.argv[1]
st = os.lstat(f)
xs = []
try:
    names = sorted(os.listxattr(f, follow_symlinks=False))
except OSError:
    names = []
for n in names:
    if n == "security.ima":
        continue
    xs.append("%s=%s" % (n, os.getxattr(f, n, follow_symlinks=False).hex()))
print("%o %d:%d %s" % (stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid, " ".join(xs)))
PY
}

# check DIR HOW: every file kept its attributes, gained .sframe, runs.
check() {
  local d=$1 how=$2 f
  for f in suid sub/sgid caps; do
    local want got
    want=$(cat "$d.attrs/$(basename "$f")")
    got=$(attrs "$d/$f")
    checked=$((checked + 1))
    [ "$want" = "$got" ] || fail "$how: $f: had [$want], now [$got]"
    LC_ALL=C readelf -SW "$d/$f" | grep -q ' \.sframe ' || fail "$how: $f not converted"
    python3 -c 'import os,sys; sys.exit("security.ima" in os.listxattr(sys.argv[1]))' "$d/$f" ||
      fail "$how: $f kept the IMA signature of its old bytes"
    "$d/$f" --version >/dev/null 2>&1 || fail "$how: $f does not run"
  done
}

for how in single tree jobs; do
  d=$T/$how
  setup "$d" || { fail "$how: cannot set up extended attributes (filesystem?)"; continue; }
  mkdir -p "$d.attrs"
  for f in suid sub/sgid caps; do attrs "$d/$f" >"$d.attrs/$(basename "$f")"; done
  case $how in
    single) "$E2S" -q --in-place "$d/suid" "$d/sub/sgid" "$d/caps" || fail "single: exit $?" ;;
    tree)   "$E2S" -q --in-place -r "$d" || fail "tree: exit $?" ;;
    jobs)   "$E2S" -q --in-place -r -j 2 "$d" || fail "jobs: exit $?" ;;
  esac
  check "$d" "$how"
done
# A new output (-o) belongs to whoever runs the tool: like cp, it does
# not keep set-ID bits (a copy of a root-owned set-user-ID program made
# by another user must not run as that user... nor the reverse).
d=$T/new
if setup "$d"; then
  "$E2S" -q "$d/suid" -o "$d/suid.out" || fail "-o: exit $?"
  "$E2S" -q "$d/sub/sgid" -o "$d/sgid.out" || fail "-o: exit $?"
  checked=$((checked + 2))
  [ "$(stat -c %a "$d/suid.out")" = 755 ] || fail "-o kept set-user-ID: $(stat -c %a "$d/suid.out")"
  [ "$(stat -c %a "$d/sgid.out")" = 750 ] || fail "-o kept set-group-ID: $(stat -c %a "$d/sgid.out")"
fi
[ $root = 1 ] || echo "note: not root: owners and security.capability not exercised"
echo "inplace_attrs: $checked files checked, $fails failures"
[ $fails -eq 0 ]
