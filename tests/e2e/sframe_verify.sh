#!/usr/bin/env bash
# .sframe built from real binaries' .eh_frame (hidden EH2SFRAME_DEV_BUILD
# mode), attached with objcopy at a chosen address, must --verify clean
# against the DWARF (mismatch=0 extra=0) for AMD64, AArch64 and s390x, and
# with missing=0: every function the DWARF allows is in our output (a
# function the converter drops though SFrame can say it is "missing"); and
# a single flipped byte inside an FRE data word must make --verify fail.
set -u
cd "$(dirname "$0")/../.."
bin=./eh2sframe
[ -x $bin ] || { echo "no ./eh2sframe (make all)"; exit 77; }
command -v python3 >/dev/null || { echo "no python3"; exit 77; }
tmp=$(mktemp -d /tmp/sframe-e2e.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0 done=0
addr=0x10000000

attach() { # objcopy IN SF OUT
	"$1" --add-section .sframe="$3" --set-section-flags .sframe=alloc,readonly \
		--change-section-address .sframe=$addr "$2" "$4" 2>/dev/null
}

check() { # FILE OBJCOPY
	local f=$1 oc=$2 n
	[ -f "$f" ] && command -v "$oc" >/dev/null || return 0
	n=$(basename "$(dirname "$f")")-$(basename "$f")
	if ! EH2SFRAME_DEV_BUILD="$tmp/$n.sf@$addr" $bin -q --dump "$f"; then
		echo "FAIL build $f"; fail=1; return
	fi
	attach "$oc" "$f" "$tmp/$n.sf" "$tmp/$n" || { echo "FAIL objcopy $f"; fail=1; return; }
	out=$($bin --verify "$tmp/$n"); rc=$?
	echo "$f: $(echo "$out" | tail -1) bytes=$(stat -c %s "$tmp/$n.sf")"
	if [ $rc -ne 0 ] || ! echo "$out" | tail -1 | grep -q " mismatch=0 missing=0 skipped=[0-9]* extra=0"; then
		echo "$out" | head -5; echo "FAIL verify $f"; fail=1; return
	fi
	done=$((done + 1))
}

check /usr/bin/ls objcopy
check /usr/lib/x86_64-linux-gnu/libc.so.6 objcopy
check /usr/lib/x86_64-linux-gnu/libstdc++.so.6 objcopy
check /usr/aarch64-linux-gnu/lib/libc.so.6 aarch64-linux-gnu-objcopy
check /usr/aarch64-linux-gnu/lib/libstdc++.so.6 aarch64-linux-gnu-objcopy
check /usr/s390x-linux-gnu/lib/libc.so.6 s390x-linux-gnu-objcopy
check /usr/s390x-linux-gnu/lib/libstdc++.so.6 s390x-linux-gnu-objcopy
# (a skip only when no input was there: every check failing is a failure)
[ $done -gt 0 ] || [ $fail -ne 0 ] || { echo "no input binaries"; exit 77; }

# Flip one byte: the CFA data word of the second FRE of the first function
# that has at least two FREs (parsing the V3 layout from the spec).
src=/usr/bin/ls
[ -f $src ] || src=/usr/lib/x86_64-linux-gnu/libc.so.6
EH2SFRAME_DEV_BUILD="$tmp/flip.sf@$addr" $bin -q --dump $src || exit 1
off=$(python3 - "$tmp/flip.sf" <<'EOF'
import struct, sys
b = bytearray(open(sys.argv[1], 'rb').read())
assert b[0:2] == b'\xe2\xde'
nfdes, nfres, frelen, fdeoff, freoff = struct.unpack_from('<IIIII', b, 8)
base = 28 + freoff
for i in range(nfdes):
    start, size, fo = struct.unpack_from('<qII', b, 28 + fdeoff + 16 * i)
    p = base + fo
    n, info = struct.unpack_from('<HB', b, p)
    if n < 2 or (info >> 4) & 1:
        continue
    ab = {0: 1, 1: 2, 2: 4}[info & 15]
    p += 5
    info0 = b[p + ab]
    p += ab + 1 + ((info0 >> 1) & 15) * (1 << ((info0 >> 5) & 3))
    # second FRE: start, info, first data word (CFA offset)
    print(p + ab + 1)
    break
EOF
)
[ -n "$off" ] || { echo "FAIL: no FRE to flip"; exit 1; }
python3 -c "
import sys
b = bytearray(open('$tmp/flip.sf','rb').read()); b[$off] ^= 1
open('$tmp/flip.sf','wb').write(b)"
attach objcopy $src "$tmp/flip.sf" "$tmp/flipped" || exit 1
out=$($bin --verify "$tmp/flipped"); rc=$?
echo "flipped byte at .sframe+$off: rc=$rc $(echo "$out" | tail -1)"
echo "$out" | grep -m1 '^mismatch'
if [ $rc -ne 1 ] || ! echo "$out" | tail -1 | grep -q "mismatch=1 "; then
	echo "FAIL: verify did not catch the flipped byte"; fail=1
fi
# The same for the PLT's MASK FDE (its FREs repeat in every 16-byte block).
$bin -q /bin/ls -o "$tmp/ls.sf" && python3 tests/e2e/lib/bump_mask_fre.py "$tmp/ls.sf" || exit 1
out=$($bin --verify "$tmp/ls.sf"); rc=$?
echo "MASK FRE word changed: rc=$rc $(echo "$out" | tail -1)"
if [ $rc -ne 1 ] || ! echo "$out" | tail -1 | grep -q "mismatch=1 "; then
	echo "FAIL: verify did not catch the changed MASK FRE"; fail=1
fi
exit $fail
