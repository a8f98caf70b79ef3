	.text
	.macro fn name
	.globl \name
	.type \name,%function
\name:
	.cfi_startproc
	.endm
	.macro efn name
	ret
	.cfi_endproc
	.size \name,.-\name
	.endm
	fn basic
	stp x29, x30, [sp, -32]!
	.cfi_def_cfa_offset 32
	.cfi_offset 29, -32
	.cfi_offset 30, -24
	mov x29, sp
	.cfi_def_cfa_register 29
	bl leaf
	ldp x29, x30, [sp], 32
	.cfi_restore 30
	.cfi_restore 29
	.cfi_def_cfa 31, 0
	efn basic
	fn leaf
	nop
	efn leaf
	fn fponly
	sub sp, sp, #16
	.cfi_def_cfa_offset 16
	str x29, [sp]
	.cfi_offset 29, -16
	nop
	add sp, sp, #16
	.cfi_def_cfa_offset 0
	efn fponly
	fn raonly
	str x30, [sp, -16]!
	.cfi_def_cfa_offset 16
	.cfi_offset 30, -16
	nop
	ldr x30, [sp], 16
	.cfi_restore 30
	.cfi_def_cfa_offset 0
	efn raonly
	fn pauth_a
	paciasp
	.cfi_negate_ra_state
	stp x29, x30, [sp, -16]!
	.cfi_def_cfa_offset 16
	.cfi_offset 29, -16
	.cfi_offset 30, -8
	nop
	ldp x29, x30, [sp], 16
	.cfi_restore 30
	.cfi_restore 29
	.cfi_def_cfa_offset 0
	autiasp
	.cfi_negate_ra_state
	efn pauth_a
	fn pauth_b
	.cfi_b_key_frame
	pacibsp
	.cfi_negate_ra_state
	stp x29, x30, [sp, -16]!
	.cfi_def_cfa_offset 16
	.cfi_offset 29, -16
	.cfi_offset 30, -8
	nop
	efn pauth_b
	fn sig
	.cfi_signal_frame
	nop
	efn sig
	fn outer
	.cfi_undefined x30
	mov x29, #0
	bl leaf
	efn outer
	fn ra_in_reg
	mov x9, x30
	.cfi_register 30, 9
	nop
	efn ra_in_reg
	fn cfa_x9
	mov x9, sp
	.cfi_def_cfa_register 9
	nop
	efn cfa_x9
