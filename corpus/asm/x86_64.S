/* Hand-written x86-64 CFI covering the directives and DWARF shapes the
 * CFI engine must interpret. Only asm_anchor is ever called; the other
 * functions exist for their unwind tables. DWARF regs: rax 0, rdx 1,
 * rcx 2, rbx 3, rsi 4, rdi 5, rbp 6, rsp 7, r8-r15 8-15, rip 16. */
	.text
	.globl asm_anchor
	.type asm_anchor, @function
asm_anchor:
	.cfi_startproc
	ret
	.cfi_endproc
	.size asm_anchor, .-asm_anchor

/* Classic frame pointer prologue/epilogue with remember/restore state
 * around an early return. */
	.globl x_remember
	.type x_remember, @function
x_remember:
	.cfi_startproc
	pushq %rbp
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %rbp, 0
	movq %rsp, %rbp
	.cfi_def_cfa_register %rbp
	pushq %rbx
	.cfi_offset %rbx, -24
	testq %rdi, %rdi
	je 1f
	.cfi_remember_state
	popq %rbx
	.cfi_restore %rbx
	popq %rbp
	.cfi_def_cfa %rsp, 8
	.cfi_restore %rbp
	ret
	.cfi_restore_state
1:	movq $1, %rax
	.cfi_remember_state
	.cfi_remember_state
	popq %rbx
	.cfi_same_value %rbx
	leave
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_restore_state
	nop
	.cfi_restore_state
	nop
	.cfi_endproc
	.size x_remember, .-x_remember

/* DRAP as GCC emits it: CFA from r10, then an expression CFA
 * DW_OP_breg6 -8; DW_OP_deref and rbp saved by DW_OP_breg6 0. */
	.globl x_drap
	.type x_drap, @function
x_drap:
	.cfi_startproc
	leaq 8(%rsp), %r10
	.cfi_def_cfa %r10, 0
	andq $-64, %rsp
	pushq -8(%r10)
	pushq %rbp
	movq %rsp, %rbp
	.cfi_escape 0x10,0x6,0x2,0x76,0
	pushq %r10
	.cfi_escape 0xf,0x3,0x76,0x78,0x6
	subq $128, %rsp
	nop
	movq -8(%rbp), %r10
	.cfi_def_cfa %r10, 0
	leave
	leaq -8(%r10), %rsp
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
	.size x_drap, .-x_drap

/* The PLT CFA expression: rsp + 8 + ((rip & 15) >= 11) << 3. */
	.globl x_pltlike
	.type x_pltlike, @function
x_pltlike:
	.cfi_startproc
	.cfi_def_cfa_offset 16
	.cfi_escape 0xf,0xb,0x77,0x8,0x80,0,0x3f,0x1a,0x3b,0x2a,0x33,0x24,0x22
	nop
	nop
	ret
	.cfi_endproc
	.size x_pltlike, .-x_pltlike

/* Signal trampoline shape: 'S' augmentation, registers described by
 * expressions relative to rsp, RA by a DW_OP_breg7 168 expression. */
	.globl x_sigtramp
	.type x_sigtramp, @function
	nop
x_sigtramp:
	.cfi_startproc simple
	.cfi_signal_frame
	.cfi_escape 0xf,0x3,0x77,0xa0,0x1
	.cfi_escape 0x10,0x6,0x3,0x77,0xf8,0x0
	.cfi_escape 0x10,0x7,0x3,0x77,0x80,0x1
	.cfi_escape 0x10,0x10,0x3,0x77,0xa8,0x1
	movq $15, %rax
	syscall
	.cfi_endproc
	.size x_sigtramp, .-x_sigtramp

/* Outermost frame: RA undefined. */
	.globl x_start
	.type x_start, @function
x_start:
	.cfi_startproc
	.cfi_undefined %rip
	xorl %ebp, %ebp
	.cfi_undefined %rbp
	movq %rsp, %rdi
	call asm_anchor
	hlt
	.cfi_endproc
	.size x_start, .-x_start

/* RA and FP moved to other registers, value rules, same value, restore,
 * val_expression, large advances (advance_loc2 and advance_loc4). */
	.globl x_misc
	.type x_misc, @function
x_misc:
	.cfi_startproc
	popq %r11
	.cfi_adjust_cfa_offset -8
	.cfi_register %rip, %r11
	movq %rbp, %rax
	.cfi_register %rbp, %rax
	nop
	.cfi_val_offset %rbp, -16
	nop
	.cfi_same_value %rbp
	nop
	.cfi_restore %rbp
	nop
	.cfi_escape 0x16,0x6,0x2,0x77,0x10
	.skip 300, 0x90
	.cfi_undefined %rbp
	.skip 70000, 0x90
	.cfi_offset %rbp, -4096
	.cfi_val_offset %rsp, 0
	nop
	.cfi_def_cfa_offset 65536
	nop
	.cfi_def_cfa %rbx, -8
	nop
	pushq %r11
	.cfi_def_cfa %rsp, 8
	.cfi_restore %rip
	.cfi_restore %rbp
	.cfi_restore %rsp
	ret
	.cfi_endproc
	.size x_misc, .-x_misc

/* A function with no CFI instructions beyond the CIE's. */
	.globl x_leaf
	.type x_leaf, @function
x_leaf:
	.cfi_startproc
	ret
	.cfi_endproc
	.size x_leaf, .-x_leaf

/* Less common encodings via .cfi_escape: DW_CFA_def_cfa_sf (0x12),
 * def_cfa_offset_sf (0x13), offset_extended (0x05), offset_extended_sf
 * (0x11), val_offset_sf (0x15), restore_extended (0x06),
 * GNU_args_size (0x2e), GNU_negative_offset_extended (0x2f), nop (0). */
	.globl x_ops
	.type x_ops, @function
x_ops:
	.cfi_startproc
	nop
	.cfi_escape 0x12,0x7,0x7e
	nop
	.cfi_escape 0x13,0x7d
	nop
	.cfi_escape 0x05,0x6,0x3
	nop
	.cfi_escape 0x11,0x10,0x7f
	nop
	.cfi_escape 0x15,0x6,0x7c
	nop
	.cfi_escape 0x06,0x6
	nop
	.cfi_escape 0x2e,0x20
	nop
	.cfi_escape 0x2f,0x6,0x2
	nop
	.cfi_escape 0x0,0x0
	.cfi_escape 0x06,0x10
	nop
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
	.size x_ops, .-x_ops

	/* FP's value is CFA - 16 (val_offset) while only the CFA offset
	 * changes: the FP word follows the CFA (no row shortcut may keep
	 * the old one). */
	.globl x_fp_cfa_valued
	.type x_fp_cfa_valued, @function
x_fp_cfa_valued:
	.cfi_startproc
	push %rbp
	.cfi_def_cfa_offset 16
	.cfi_val_offset %rbp, -16
	sub $8, %rsp
	.cfi_def_cfa_offset 24
	add $8, %rsp
	.cfi_def_cfa_offset 16
	pop %rbp
	.cfi_def_cfa_offset 8
	.cfi_restore %rbp
	ret
	.cfi_endproc
	.size x_fp_cfa_valued, .-x_fp_cfa_valued

	/* The same CFA program twice: the first reaches its end (its last
	 * rule takes effect at the end, so covers no instruction), the
	 * second is longer and has one more row. */
	.globl x_reach_end
	.type x_reach_end, @function
x_reach_end:
	.cfi_startproc
	push %rbp
	.cfi_def_cfa_offset 16
	.cfi_endproc
	.size x_reach_end, .-x_reach_end
	.globl x_reach_past
	.type x_reach_past, @function
x_reach_past:
	.cfi_startproc
	push %rbp
	.cfi_def_cfa_offset 16
	pop %rbp
	nop
	ret
	.cfi_endproc
	.size x_reach_past, .-x_reach_past

	/* SP "same value" holds only while the CFA is SP + 0: after the
	 * CFA offset moves, SFrame's caller SP (= CFA) is wrong, so the
	 * function is not converted (sp-rule). */
	.globl x_sp_same
	.type x_sp_same, @function
x_sp_same:
	.cfi_startproc
	.cfi_def_cfa %rsp, 0
	.cfi_same_value %rsp
	nop
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size x_sp_same, .-x_sp_same

	.section .note.GNU-stack,"",@progbits
