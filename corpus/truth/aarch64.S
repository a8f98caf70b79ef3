/* Unwind-truth classes, AArch64 (issue #10); see x86_64.S for the
 * "expect:" convention. DWARF regs: x15 15, x29 29, x30 30, sp 31,
 * RA_SIGN_STATE 34. AArch64 gets default FDEs only (as gas and the known
 * consumers), so what needs a flexible FDE is skipped. */
	.text

/* expect: a_plain converted */
	.globl a_plain
	.type a_plain, %function
a_plain:
	.cfi_startproc
	stp x29, x30, [sp, #-16]!
	.cfi_def_cfa_offset 16
	.cfi_offset 29, -16
	.cfi_offset 30, -8
	mov x29, sp
	ldp x29, x30, [sp], #16
	.cfi_restore 30
	.cfi_restore 29
	.cfi_def_cfa_offset 0
	ret
	.cfi_endproc
	.size a_plain, .-a_plain

/* pac-ret, key A: the mangled-RA bit follows negate_ra_state.
 * expect: a_pac converted */
	.globl a_pac
	.type a_pac, %function
a_pac:
	.cfi_startproc
	hint #25 /* paciasp */
	.cfi_negate_ra_state
	stp x29, x30, [sp, #-16]!
	.cfi_def_cfa_offset 16
	.cfi_offset 29, -16
	.cfi_offset 30, -8
	ldp x29, x30, [sp], #16
	.cfi_restore 30
	.cfi_restore 29
	.cfi_def_cfa_offset 0
	hint #29 /* autiasp */
	.cfi_negate_ra_state
	ret
	.cfi_endproc
	.size a_pac, .-a_pac

/* pac-ret, key B.
 * expect: a_pac_b converted */
	.globl a_pac_b
	.type a_pac_b, %function
a_pac_b:
	.cfi_startproc
	.cfi_b_key_frame
	hint #27 /* pacibsp */
	.cfi_negate_ra_state
	stp x29, x30, [sp, #-16]!
	.cfi_def_cfa_offset 16
	.cfi_offset 29, -16
	.cfi_offset 30, -8
	ldp x29, x30, [sp], #16
	.cfi_def_cfa_offset 0
	.cfi_restore 30
	.cfi_restore 29
	hint #31 /* autibsp */
	.cfi_negate_ra_state
	ret
	.cfi_endproc
	.size a_pac_b, .-a_pac_b

/* Class 3: DW_CFA_AARCH64_negate_ra_state_with_pc (PAuth_LR): the PC is
 * a second signing modifier, which V3 cannot say.
 * expect: a_pauth_lr skip ra-signed-with-pc */
	.globl a_pauth_lr
	.type a_pauth_lr, %function
a_pauth_lr:
	.cfi_startproc
	hint #25
	.cfi_escape 0x2c
	stp x29, x30, [sp, #-16]!
	.cfi_def_cfa_offset 16
	.cfi_offset 29, -16
	.cfi_offset 30, -8
	ldp x29, x30, [sp], #16
	.cfi_def_cfa_offset 0
	ret
	.cfi_endproc
	.size a_pauth_lr, .-a_pauth_lr

/* Class 4: RA_SIGN_STATE set through register 34
 * (DW_CFA_val_expression 34, DW_OP_lit1): signed from here on.
 * expect: a_sign34 converted */
	.globl a_sign34
	.type a_sign34, %function
a_sign34:
	.cfi_startproc
	hint #25
	.cfi_escape 0x16, 0x22, 0x01, 0x31
	stp x29, x30, [sp, #-16]!
	.cfi_def_cfa_offset 16
	.cfi_offset 29, -16
	.cfi_offset 30, -8
	ldp x29, x30, [sp], #16
	.cfi_def_cfa_offset 0
	.cfi_escape 0x16, 0x22, 0x01, 0x30
	ret
	.cfi_endproc
	.size a_sign34, .-a_sign34

/* Class 4: register 34 given a rule that is no constant state.
 * expect: a_sign34_bad skip ra-sign-state */
	.globl a_sign34_bad
	.type a_sign34_bad, %function
a_sign34_bad:
	.cfi_startproc
	nop
	.cfi_escape 0x07, 0x22 /* DW_CFA_undefined 34 */
	ret
	.cfi_endproc
	.size a_sign34_bad, .-a_sign34_bad

/* Class 2: CIE return column x15: the return address is x15's value,
 * which a default FDE cannot name.
 * expect: a_retcol_x15 skip ra-rule */
	.globl a_retcol_x15
	.type a_retcol_x15, %function
a_retcol_x15:
	.cfi_startproc
	.cfi_return_column 15
	nop
	br x15
	.cfi_endproc
	.size a_retcol_x15, .-a_retcol_x15

/* glibc 2.36 __rawmemchr: LR parked in x15 around a call.
 * expect: a_lr_in_x15 skip ra-rule */
	.globl a_lr_in_x15
	.type a_lr_in_x15, %function
a_lr_in_x15:
	.cfi_startproc
	mov x15, x30
	.cfi_register 30, 15
	mov x30, x15
	.cfi_restore 30
	ret
	.cfi_endproc
	.size a_lr_in_x15, .-a_lr_in_x15

/* Class 5: RA saved at CFA+0: an RA word of 0 reads as
 * SFRAME_FRE_RA_OFFSET_INVALID.
 * expect: a_ra_cfa0 skip ra-rule */
	.globl a_ra_cfa0
	.type a_ra_cfa0, %function
a_ra_cfa0:
	.cfi_startproc
	sub sp, sp, #16
	.cfi_def_cfa_offset 16
	str x30, [sp, #16]
	.cfi_offset 30, 0
	add sp, sp, #16
	.cfi_def_cfa_offset 0
	.cfi_restore 30
	ret
	.cfi_endproc
	.size a_ra_cfa0, .-a_ra_cfa0

/* Class 1: SP stored at entry, while the CFA is sp+0: the slot holds the
 * caller's SP.
 * expect: a_sp_entry converted */
	.globl a_sp_entry
	.type a_sp_entry, %function
a_sp_entry:
	.cfi_startproc
	mov x9, sp
	str x9, [sp, #-16]
	.cfi_offset 31, -16
	ret
	.cfi_endproc
	.size a_sp_entry, .-a_sp_entry

/* Class 1: SP stored after sub sp: the slot holds CFA-32.
 * expect: a_sp_after_sub skip sp-rule */
	.globl a_sp_after_sub
	.type a_sp_after_sub, %function
a_sp_after_sub:
	.cfi_startproc
	sub sp, sp, #32
	.cfi_def_cfa_offset 32
	mov x9, sp
	str x9, [sp]
	.cfi_offset 31, -32
	add sp, sp, #32
	.cfi_def_cfa_offset 0
	.cfi_restore 31
	ret
	.cfi_endproc
	.size a_sp_after_sub, .-a_sp_after_sub

/* FP saved without RA on the stack: a default FRE's word 3 is FP only
 * after an RA word.
 * expect: a_fp_only skip fp-rule */
	.globl a_fp_only
	.type a_fp_only, %function
a_fp_only:
	.cfi_startproc
	str x29, [sp, #-16]!
	.cfi_def_cfa_offset 16
	.cfi_offset 29, -16
	ldr x29, [sp], #16
	.cfi_def_cfa_offset 0
	.cfi_restore 29
	ret
	.cfi_endproc
	.size a_fp_only, .-a_fp_only

/* Outermost frame.
 * expect: a_outermost converted */
	.globl a_outermost
	.type a_outermost, %function
a_outermost:
	.cfi_startproc
	.cfi_undefined 30
	mov x29, #0
	brk #0
	.cfi_endproc
	.size a_outermost, .-a_outermost
	.section .note.GNU-stack,"",%progbits
