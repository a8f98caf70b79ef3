/* Hand-written AArch64 CFI: pointer authentication (negate_ra_state,
 * B key), frame records, an SVE-like expression CFA followed by
 * def_cfa_offset (undefined by DWARF: our CFA "invalid").
 * DWARF regs: x0-x30 0-30, sp 31, vg 46. */
	.text
	.globl asm_anchor
	.type asm_anchor, %function
asm_anchor:
	.cfi_startproc
	ret
	.cfi_endproc
	.size asm_anchor, .-asm_anchor

	.globl a_frame
	.type a_frame, %function
a_frame:
	.cfi_startproc
	stp x29, x30, [sp, -32]!
	.cfi_def_cfa_offset 32
	.cfi_offset 29, -32
	.cfi_offset 30, -24
	mov x29, sp
	.cfi_def_cfa_register 29
	str x19, [sp, 16]
	.cfi_offset 19, -16
	cbz x0, 1f
	.cfi_remember_state
	ldr x19, [sp, 16]
	.cfi_restore 19
	ldp x29, x30, [sp], 32
	.cfi_restore 30
	.cfi_restore 29
	.cfi_def_cfa sp, 0
	ret
	.cfi_restore_state
1:	mov x0, 1
	ldr x19, [sp, 16]
	ldp x29, x30, [sp], 32
	.cfi_restore 30
	.cfi_restore 29
	.cfi_restore 19
	.cfi_def_cfa_offset 0
	ret
	.cfi_endproc
	.size a_frame, .-a_frame

	.globl a_pac
	.type a_pac, %function
a_pac:
	.cfi_startproc
	hint 25 // paciasp
	.cfi_negate_ra_state
	stp x29, x30, [sp, -16]!
	.cfi_def_cfa_offset 16
	.cfi_offset 29, -16
	.cfi_offset 30, -8
	mov x29, sp
	cbz x0, 1f
	.cfi_remember_state
	ldp x29, x30, [sp], 16
	.cfi_restore 30
	.cfi_restore 29
	.cfi_def_cfa_offset 0
	hint 29 // autiasp
	.cfi_negate_ra_state
	ret
	.cfi_restore_state
1:	ldp x29, x30, [sp], 16
	.cfi_restore 30
	.cfi_restore 29
	.cfi_def_cfa_offset 0
	hint 29
	.cfi_negate_ra_state
	ret
	.cfi_endproc
	.size a_pac, .-a_pac

	.globl a_bkey
	.type a_bkey, %function
a_bkey:
	.cfi_startproc
	.cfi_b_key_frame
	hint 27 // pacibsp
	.cfi_negate_ra_state
	str x30, [sp, -16]!
	.cfi_def_cfa_offset 16
	.cfi_offset 30, -16
	ldr x30, [sp], 16
	.cfi_restore 30
	.cfi_def_cfa_offset 0
	hint 31 // autibsp
	.cfi_negate_ra_state
	ret
	.cfi_endproc
	.size a_bkey, .-a_bkey

	.globl a_sve
	.type a_sve, %function
a_sve:
	.cfi_startproc
	stp x29, x30, [sp, -16]!
	.cfi_def_cfa_offset 16
	.cfi_offset 29, -16
	.cfi_offset 30, -8
	nop // addvl sp, sp, -2
	/* CFA = sp + 16 + vg * 8 */
	.cfi_escape 0xf,0x9,0x8f,0x10,0x92,0x2e,0x0,0x38,0x1e,0x22,0x96
	nop
	nop // addvl sp, sp, 2
	.cfi_def_cfa_offset 16
	nop
	.cfi_def_cfa sp, 16
	ldp x29, x30, [sp], 16
	.cfi_restore 30
	.cfi_restore 29
	.cfi_def_cfa_offset 0
	ret
	.cfi_endproc
	.size a_sve, .-a_sve

/* RA kept in another register; outermost frame. */
	.globl a_misc
	.type a_misc, %function
a_misc:
	.cfi_startproc
	mov x9, x30
	.cfi_register 30, 9
	nop
	.cfi_val_offset 29, -32
	nop
	.cfi_same_value 29
	nop
	.cfi_undefined 30
	nop
	.cfi_restore 30
	mov x30, x9
	ret
	.cfi_endproc
	.size a_misc, .-a_misc

	.section .note.GNU-stack,"",%progbits
