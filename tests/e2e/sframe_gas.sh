#!/usr/bin/env bash
# Cross-check with binutils 2.47 (oracle chroot): for sources covering the
# default rbp frame, outermost RA, DRAP (flexible FDE with deref rules), the
# GNU ld PLT (MASK FDE), AArch64 B-key signing + signal frame, s390x RA
# padding and FPR-saved RA/FP (flex):
#  1. eh2sframe --dump of gas's .sframe == objdump --sframe text;
#  2. eh2sframe --verify of gas's linked .sframe against its .eh_frame;
#  3. our .sframe built from the linked .eh_frame is byte-identical to
#     gas+ld's for the AMD64 program (same section address).
set -u
cd "$(dirname "$0")/../.."
root=$(pwd)
bin=$root/eh2sframe
[ -x "$bin" ] || exit 77
[ -f oracle/sid/.eh2sframe-oracle-ok ] && [ "$(id -u)" = 0 ] || { echo "no oracle"; exit 77; }
tmp=$(mktemp -d /tmp/sframe-gas.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0
cat > $tmp/x.s <<'EOF'
	.text
	.globl f
f:	.cfi_startproc
	pushq %rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	movq %rsp, %rbp
	.cfi_def_cfa_register %rbp
	nop
	popq %rbp
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
	.globl _start
_start:	.cfi_startproc
	.cfi_undefined %rip
	call foo@PLT
	call bar@PLT
	.cfi_endproc
h:	.cfi_startproc
	leaq 8(%rsp), %r10
	.cfi_def_cfa %r10, 0
	andq $-16, %rsp
	pushq -8(%r10)
	pushq %rbp
	.cfi_escape 0x10,0x6,0x2,0x76,0x0
	movq %rsp, %rbp
	.cfi_escape 0xf,0x3,0x76,0x78,0x6
	nop
	leaq -8(%r10), %rsp
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
EOF
cat > $tmp/lib.s <<'EOF'
	.text
	.globl foo, bar
foo:	.cfi_startproc
	ret
	.cfi_endproc
bar:	.cfi_startproc
	ret
	.cfi_endproc
EOF
cat > $tmp/a.s <<'EOF'
	.text
	.globl f
f:	.cfi_startproc
	.cfi_b_key_frame
	pacibsp
	.cfi_negate_ra_state
	stp x29, x30, [sp, -32]!
	.cfi_def_cfa_offset 32
	.cfi_offset 29, -32
	.cfi_offset 30, -24
	mov x29, sp
	.cfi_def_cfa_register 29
	nop
	ldp x29, x30, [sp], 32
	.cfi_restore 30
	.cfi_restore 29
	.cfi_def_cfa 31, 0
	autibsp
	.cfi_negate_ra_state
	ret
	.cfi_endproc
g:	.cfi_startproc
	.cfi_signal_frame
	nop
	ret
	.cfi_endproc
EOF
cat > $tmp/s.s <<'EOF'
	.text
	.globl f
f:	.cfi_startproc
	stmg %r11,%r15,88(%r15)
	.cfi_offset 11, -72
	.cfi_offset 14, -48
	.cfi_offset 15, -40
	aghi %r15,-160
	.cfi_def_cfa_offset 320
	lgr %r11,%r15
	.cfi_def_cfa_register 11
	nopr
	lmg %r11,%r15,248(%r11)
	.cfi_restore 15
	.cfi_restore 14
	.cfi_restore 11
	.cfi_def_cfa 15, 160
	br %r14
	.cfi_endproc
g:	.cfi_startproc
	ldgr %f0,%r11
	.cfi_register 11, 16
	ldgr %f2,%r14
	.cfi_register 14, 17
	nopr
	br %r14
	.cfi_endproc
h:	.cfi_startproc
	stg %r11,88(%r15)
	.cfi_offset 11, -72
	nopr
	br %r14
	.cfi_endproc
EOF
IN_ORACLE_BIND=$tmp tools/in-oracle.sh sh -c "cd $tmp &&
  as --gsframe -o x.o x.s && as --gsframe -o lib.o lib.s && ld -shared -o libx.so lib.o &&
  ld -o x x.o libx.so -dynamic-linker /lib64/ld-linux-x86-64.so.2 &&
  aarch64-linux-gnu-as --gsframe -o a.o a.s && aarch64-linux-gnu-ld -e f -o a a.o &&
  s390x-linux-gnu-as --gsframe -o s.o s.s && s390x-linux-gnu-ld -e f -o s s.o &&
  for f in x.o x; do objdump --sframe \$f > \$f.ref; done &&
  for f in a.o a; do aarch64-linux-gnu-objdump --sframe \$f > \$f.ref; done &&
  for f in s.o s; do s390x-linux-gnu-objdump --sframe \$f > \$f.ref; done" || { echo "oracle tools failed"; exit 77; }
for f in x.o x a.o a s.o s; do
	sed -n '/^Contents of the SFrame/,$p' $tmp/$f.ref > $tmp/$f.want
	$bin --dump $tmp/$f > $tmp/$f.got
	if cmp -s $tmp/$f.want $tmp/$f.got; then
		echo "dump $f: identical to objdump ($(grep -c 'func idx' $tmp/$f.got) functions, $(grep -cE '^    0' $tmp/$f.got) FREs)"
	else
		echo "FAIL dump $f differs from objdump:"; diff $tmp/$f.want $tmp/$f.got | head; fail=1
	fi
done
for f in x a s; do
	out=$($bin --verify $tmp/$f); rc=$?
	echo "verify gas $f: $out"
	[ $rc -eq 0 ] || fail=1
done
addr=0x$(readelf -SW $tmp/x | awk '{for (i = 1; i < NF; i++) if ($i == ".sframe") print $(i + 2)}')
objcopy -O binary --only-section=.sframe $tmp/x $tmp/x.gas.sf
EH2SFRAME_DEV_BUILD=$tmp/x.our.sf@$addr $bin -q --dump $tmp/x
cp $tmp/x $tmp/x.our && objcopy --update-section .sframe=$tmp/x.our.sf $tmp/x.our
if $bin --dump $tmp/x.our | cmp -s - $tmp/x.got; then
	echo "ours vs gas+ld (x): same dump; bytes $(stat -c %s $tmp/x.our.sf) vs $(stat -c %s $tmp/x.gas.sf)$(cmp -s $tmp/x.our.sf $tmp/x.gas.sf && echo ', identical')"
else
	echo "FAIL: our .sframe for x dumps differently from gas+ld's"; diff <($bin --dump $tmp/x.our) $tmp/x.got | head; fail=1
fi
exit $fail
