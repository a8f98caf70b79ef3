	.text
	.macro fn name
	.globl \name
	.type \name,@function
\name:
	.cfi_startproc
	.endm
	.macro efn name
	br %r14
	.cfi_endproc
	.size \name,.-\name
	.endm
	fn basic
	stmg %r11,%r15,88(%r15)
	.cfi_offset 11, -72
	.cfi_offset 14, -48
	.cfi_offset 15, -40
	aghi %r15,-160
	.cfi_def_cfa_offset 320
	lgr %r11,%r15
	.cfi_def_cfa_register 11
	brasl %r14,leaf
	lmg %r11,%r15,248(%r11)
	.cfi_restore 15
	.cfi_restore 14
	.cfi_restore 11
	.cfi_def_cfa 15, 160
	efn basic
	fn leaf
	nop
	efn leaf
	fn fponly
	stg %r11,88(%r15)
	.cfi_offset 11, -72
	nop
	efn fponly
	fn fpr
	ldgr %f0,%r14
	.cfi_register 14, 16
	ldgr %f2,%r11
	.cfi_register 11, 17
	aghi %r15,-160
	.cfi_def_cfa_offset 320
	nop
	efn fpr
	fn big
	aghi %r15,-32000
	.cfi_def_cfa_offset 32160
	nop
	efn big
	fn sig
	.cfi_signal_frame
	nop
	efn sig
	fn outer
	.cfi_undefined 14
	nop
	efn outer
	fn cfa_r1
	lgr %r1,%r15
	.cfi_def_cfa_register 1
	nop
	efn cfa_r1
	fn odd
	aghi %r15,-4
	.cfi_def_cfa_offset 164
	nop
	efn odd
