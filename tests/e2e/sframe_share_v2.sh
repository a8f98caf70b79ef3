#!/usr/bin/env bash
# FRE sharing (share_fres) and SFrame V2 output (sframe_version 2), built
# with the hidden EH2SFRAME_DEV_BUILD mode from real libraries and
# attached with objcopy:
#  1. every variant (V3, V3 shared, V2, V2 shared) --verify's clean
#     (mismatch=0 missing=0 extra=0) and sharing makes the section smaller;
#  2. with the oracle chroot: binutils 2.47 `objdump --sframe` prints the
#     same text as our --dump for every variant, and libsframe's decoder
#     (build/oracle/sframe_check) accepts the shared V3 sections of
#     little-endian targets with all PC lookups right. libsframe rejects
#     shared data it has to byte-swap (s390x on this host): printed, not
#     failed (a documented limitation of the option);
#  3. the default output of the converter itself (`eh2sframe IN -o OUT`,
#     V3 and --sframe-version=2) is the shared layout on little-endian
#     targets and the unshared one on s390x (the same bytes count as the
#     developer builds above), verifies clean, and objdump and libsframe
#     read it on this host without a complaint, s390x included.
set -u
cd "$(dirname "$0")/../.."
root=$(pwd)
bin=$root/eh2sframe
[ -x "$bin" ] || { echo "no ./eh2sframe (make all)"; exit 77; }
tmp=$(mktemp -d /tmp/sframe-share.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0 done=0
addr=0x10000000
oracle=0
[ -f "${ORACLE_DIR:-oracle/sid}/.eh2sframe-oracle-ok" ] && [ "$(id -u)" = 0 ] && oracle=1
sfsize() { echo $((16#$(readelf -SW "$1" | awk '$2 == ".sframe" { print $6 }'))); }

one() { # NAME FILE OBJCOPY OBJDUMP
	local n=$1 f=$2 oc=$3 od=$4 m t out
	[ -f "$f" ] && command -v "$oc" >/dev/null || return 0
	local -A size
	for m in "" ",share" ",v2" ",v2,share"; do
		t=$n${m//,/-}
		if ! EH2SFRAME_DEV_BUILD="$tmp/$t.sf@$addr$m" $bin -q --dump "$f"; then
			echo "FAIL build $t"; fail=1; continue
		fi
		"$oc" --add-section .sframe="$tmp/$t.sf" --set-section-flags .sframe=alloc,readonly \
			--change-section-address .sframe=$addr "$f" "$tmp/$t" 2>/dev/null ||
			{ echo "FAIL objcopy $t"; fail=1; continue; }
		out=$($bin --verify "$tmp/$t" | tail -1)
		size[${m:-,v3}]=$(stat -c %s "$tmp/$t.sf")
		echo "$t: bytes=${size[${m:-,v3}]} $out"
		echo "$out" | grep -q "mismatch=0 missing=0 skipped=[0-9]* extra=0" ||
			{ echo "FAIL verify $t"; fail=1; }
		$bin --dump "$tmp/$t" > "$tmp/$t.ours"
		echo "$t $od" >> "$tmp/list"
	done
	if [ "${size[,share]:-0}" -ge "${size[,v3]:-0}" ] || [ "${size[,v2,share]:-0}" -ge "${size[,v2]:-0}" ]; then
		echo "FAIL: sharing did not shrink $n"; fail=1
	fi
	# The converter's default output: shared where the target is
	# little-endian, as the developer builds count bytes.
	local be=0 v want
	readelf -h "$f" | grep -q 'big endian' && be=1
	for v in 3 2; do
		t=$n-default-v$v
		$bin -q --sframe-version=$v "$f" -o "$tmp/$t" || { echo "FAIL convert $t"; fail=1; continue; }
		m=$([ $v = 2 ] && echo ,v2 || echo "")
		if [ $be = 1 ]; then want=${size[${m:-,v3}]}; else want=${size[$m,share]}; fi
		[ "$(sfsize "$tmp/$t")" = "$want" ] ||
			{ echo "FAIL: $t: .sframe of $(sfsize "$tmp/$t") bytes, want $want"; fail=1; }
		out=$($bin --verify "$tmp/$t" | tail -1)
		echo "$t: bytes=$(sfsize "$tmp/$t") $out"
		echo "$out" | grep -q "mismatch=0 missing=0 skipped=[0-9]* extra=0" ||
			{ echo "FAIL verify $t"; fail=1; }
		$bin --dump "$tmp/$t" > "$tmp/$t.ours"
		echo "$t $od" >> "$tmp/list"
	done
	done=$((done + 1))
}

one x86 /usr/lib/x86_64-linux-gnu/libc.so.6 objcopy objdump
one a64 /usr/aarch64-linux-gnu/lib/libstdc++.so.6 aarch64-linux-gnu-objcopy aarch64-linux-gnu-objdump
one s390 /usr/s390x-linux-gnu/lib/libc.so.6 s390x-linux-gnu-objcopy s390x-linux-gnu-objdump
[ $done -gt 0 ] || { echo "no input binaries"; exit 77; }
[ $oracle = 1 ] || { echo "no oracle: consumer checks skipped"; exit $fail; }

check=$root/build/oracle/sframe_check
IN_ORACLE_BIND=$tmp tools/in-oracle.sh sh -c "
  [ -x $check ] || gcc -O1 -o $check $root/tests/interop/sframe_check.c -l:libsframe.a
  cd $tmp && while read t od; do
    \$od --sframe \$t > \$t.od 2> \$t.oderr; echo \$? > \$t.odrc
    case \$t in *v2*) ;; *) $check -q \$t > \$t.sc 2>&1; echo \$? > \$t.scrc;; esac
  done < list" || { echo "oracle run failed"; exit 77; }
while read -r t od; do
	# objdump exits 0 even when libsframe refuses: look at stderr too
	if [ "$(cat $tmp/$t.odrc)" != 0 ] || [ -s $tmp/$t.oderr ]; then
		case $t in
		s390-share|s390-v2-share)
			echo "$t: objdump (libsframe, byte-swapping) rejects shared FREs: $(head -c 120 $tmp/$t.oderr)" ;;
		*) echo "FAIL objdump $t: $(head -3 $tmp/$t.oderr)"; fail=1 ;;
		esac
		continue
	fi
	if sed -n '/^Contents of the SFrame/,$p' $tmp/$t.od | cmp -s - $tmp/$t.ours; then
		echo "$t: objdump --sframe text identical ($(grep -c 'func idx' $tmp/$t.ours) functions)"
	else
		echo "FAIL: objdump text differs for $t"; fail=1
		sed -n '/^Contents of the SFrame/,$p' $tmp/$t.od | diff - $tmp/$t.ours | head -5
	fi
	[ -f $tmp/$t.scrc ] || continue
	if [ "$(cat $tmp/$t.scrc)" = 0 ]; then
		echo "$t: libsframe $(tail -1 $tmp/$t.sc)"
	elif [ "${t#s390}" != "$t" ] && [ "${t%share}" != "$t" ]; then
		echo "$t: libsframe (byte-swapping) rejects shared FREs: $(tail -1 $tmp/$t.sc)"
	else
		echo "FAIL libsframe $t: $(tail -2 $tmp/$t.sc)"; fail=1
	fi
done < $tmp/list
exit $fail
