/* Unwind-truth classes, AArch64 (issues #10, #19); see x86_64.S for the
 * "expect:" convention. "converted flex" also asserts that the function
 * gets a flexible FDE (every other converted one a default FDE) and that
 * --sframe-version=2, which has no flexible FDE on AArch64, skips it as
 * not-in-sframe-v2. DWARF regs: x0-x30 0-30, sp 31, RA_SIGN_STATE 34,
 * v0-v31 64-95. */
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
 * which a default FDE cannot name; a flexible FDE's RA pair can (reg_p,
 * regnum 15, offset 0).
 * expect: a_retcol_x15 converted flex */
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
 * expect: a_lr_in_x15 converted flex */
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

/* Class 5: RA saved at CFA+0: a default FDE's RA word of 0 reads as
 * SFRAME_FRE_RA_OFFSET_INVALID; a flexible FDE says RA = *(CFA + 0)
 * (control word 2: deref_p, no register).
 * expect: a_ra_cfa0 converted flex */
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
 * after an RA word; a flexible FDE has the RA padding word for that.
 * expect: a_fp_only converted flex */
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

/* ---- Flexible FDEs (issue #19) ---- */

/* glibc 2.41's GCS pattern (__clone, __vfork, __sigsetjmp) under
 * pac-ret: the signed LR parked in x13. The mangled bit stays set on the
 * FRE whose RA is in x13.
 * expect: a_lr_in_x13_pac converted flex */
	.globl a_lr_in_x13_pac
	.type a_lr_in_x13_pac, %function
a_lr_in_x13_pac:
	.cfi_startproc
	hint #25 /* paciasp */
	.cfi_negate_ra_state
	mov x13, x30
	.cfi_register 30, 13
	nop
	mov x30, x13
	.cfi_restore 30
	hint #29 /* autiasp */
	.cfi_negate_ra_state
	ret
	.cfi_endproc
	.size a_lr_in_x13_pac, .-a_lr_in_x13_pac

/* glibc setcontext: the CFA is x0 (the context), RA and FP in it.
 * expect: a_cfa_x0 converted flex */
	.globl a_cfa_x0
	.type a_cfa_x0, %function
a_cfa_x0:
	.cfi_startproc
	nop
	.cfi_def_cfa x0, 0
	.cfi_offset 29, 416
	.cfi_offset 30, 424
	nop
	.cfi_def_cfa sp, 0
	.cfi_restore 29
	.cfi_restore 30
	ret
	.cfi_endproc
	.size a_cfa_x0, .-a_cfa_x0

/* CFA loaded from memory: DW_CFA_def_cfa_expression DW_OP_breg9 8;
 * DW_OP_deref (CFA = *(x9 + 8)), RA at CFA - 8.
 * expect: a_cfa_deref converted flex */
	.globl a_cfa_deref
	.type a_cfa_deref, %function
a_cfa_deref:
	.cfi_startproc
	nop
	.cfi_escape 0x0f, 0x03, 0x79, 0x08, 0x06
	.cfi_offset 30, -8
	nop
	.cfi_def_cfa sp, 0
	.cfi_restore 30
	ret
	.cfi_endproc
	.size a_cfa_deref, .-a_cfa_deref

/* RA saved relative to another register: DW_CFA_expression x30,
 * DW_OP_breg9 16 (RA = *(x9 + 16)).
 * expect: a_ra_deref_reg converted flex */
	.globl a_ra_deref_reg
	.type a_ra_deref_reg, %function
a_ra_deref_reg:
	.cfi_startproc
	nop
	.cfi_escape 0x10, 0x1e, 0x02, 0x79, 0x10
	nop
	.cfi_restore 30
	ret
	.cfi_endproc
	.size a_ra_deref_reg, .-a_ra_deref_reg

/* RA = CFA + 8 by value (DW_CFA_val_offset): not as a CFA-based rule
 * (control word 0 is padding) but as sp + 24, the CFA's base register.
 * expect: a_ra_valoff converted flex */
	.globl a_ra_valoff
	.type a_ra_valoff, %function
a_ra_valoff:
	.cfi_startproc
	sub sp, sp, #16
	.cfi_def_cfa_offset 16
	.cfi_val_offset 30, 8
	add sp, sp, #16
	.cfi_def_cfa_offset 0
	.cfi_restore 30
	ret
	.cfi_endproc
	.size a_ra_valoff, .-a_ra_valoff

/* RA = CFA + 8 by value with CFA = *(x9 + 8): no SFrame rule adds an
 * offset after a dereference.
 * expect: a_ra_valoff_deref skip ra-rule */
	.globl a_ra_valoff_deref
	.type a_ra_valoff_deref, %function
a_ra_valoff_deref:
	.cfi_startproc
	nop
	.cfi_escape 0x0f, 0x03, 0x79, 0x08, 0x06
	.cfi_val_offset 30, 8
	nop
	.cfi_def_cfa sp, 0
	.cfi_restore 30
	ret
	.cfi_endproc
	.size a_ra_valoff_deref, .-a_ra_valoff_deref

/* The LR parked in a SIMD register (d8, DWARF 72): control word
 * 72 << 3 | 1 = 577 needs 2-byte data words.
 * expect: a_ra_in_v8 converted flex */
	.globl a_ra_in_v8
	.type a_ra_in_v8, %function
a_ra_in_v8:
	.cfi_startproc
	fmov d8, x30
	.cfi_register 30, 72
	fmov x30, d8
	.cfi_restore 30
	ret
	.cfi_endproc
	.size a_ra_in_v8, .-a_ra_in_v8

/* FP kept in x9 (DW_CFA_register x29, x9), RA in LR.
 * expect: a_fp_in_reg converted flex */
	.globl a_fp_in_reg
	.type a_fp_in_reg, %function
a_fp_in_reg:
	.cfi_startproc
	mov x9, x29
	.cfi_register 29, 9
	mov x29, x9
	.cfi_restore 29
	ret
	.cfi_endproc
	.size a_fp_in_reg, .-a_fp_in_reg

/* FP saved at x10 - 8 (DW_CFA_expression x29, DW_OP_breg10 -8), and FP
 * = x10 + 16 by value (DW_CFA_val_expression x29, DW_OP_breg10 16).
 * expect: a_fp_deref_reg converted flex */
	.globl a_fp_deref_reg
	.type a_fp_deref_reg, %function
a_fp_deref_reg:
	.cfi_startproc
	nop
	.cfi_escape 0x10, 0x1d, 0x02, 0x7a, 0x78
	nop
	.cfi_escape 0x16, 0x1d, 0x02, 0x7a, 0x10
	nop
	.cfi_restore 29
	ret
	.cfi_endproc
	.size a_fp_deref_reg, .-a_fp_deref_reg

/* CFA = x9 + x10 (DW_OP_breg9 0; DW_OP_breg10 0; DW_OP_plus): a sum
 * of two registers is no SFrame rule.
 * expect: a_cfa_sum skip cfa-expression */
	.globl a_cfa_sum
	.type a_cfa_sum, %function
a_cfa_sum:
	.cfi_startproc
	nop
	.cfi_escape 0x0f, 0x05, 0x79, 0x00, 0x7a, 0x00, 0x22
	nop
	.cfi_def_cfa sp, 0
	ret
	.cfi_endproc
	.size a_cfa_sum, .-a_cfa_sum

/* RA saved at x9 + x10: likewise.
 * expect: a_ra_sum skip ra-rule */
	.globl a_ra_sum
	.type a_ra_sum, %function
a_ra_sum:
	.cfi_startproc
	nop
	.cfi_escape 0x10, 0x1e, 0x05, 0x79, 0x00, 0x7a, 0x00, 0x22
	nop
	.cfi_restore 30
	ret
	.cfi_endproc
	.size a_ra_sum, .-a_ra_sum

/* FP undefined: SFrame has no such rule.
 * expect: a_fp_undef skip fp-rule */
	.globl a_fp_undef
	.type a_fp_undef, %function
a_fp_undef:
	.cfi_startproc
	nop
	.cfi_undefined 29
	ret
	.cfi_endproc
	.size a_fp_undef, .-a_fp_undef
	.section .note.GNU-stack,"",%progbits
