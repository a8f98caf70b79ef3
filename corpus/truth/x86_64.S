/* Unwind-truth classes, x86-64 (issue #10): each function's CFI is a
 * shape that SFrame can or cannot express, with the converter's expected
 * verdict on an "expect:" line (converted, converted flex, or skip
 * REASON). The same verdict must come from the independent verifier
 * (converted: matches; skip: no FRE, judged inexpressible). "converted"
 * means a default FDE, "converted flex" a flexible one, which SFrame V2
 * (tests/e2e/truth_classes.sh checks --sframe-version=2 too) has only on
 * s390x. Never called; only the unwind tables matter. DWARF regs: rdx 1, rbx 3, rbp 6, rsp 7, r12 12, rip 16. */
	.text

/* expect: t_plain converted */
	.globl t_plain
	.type t_plain, @function
t_plain:
	.cfi_startproc
	pushq %rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	movq %rsp, %rbp
	.cfi_def_cfa_register %rbp
	popq %rbp
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
	.size t_plain, .-t_plain

/* Class 1, glibc 2.36 setcontext: the CFA moves to the context (rdx) and
 * SP is reloaded from it; the caller's SP is *(rdx+160), not the CFA.
 * expect: t_setcontext skip sp-rule */
	.globl t_setcontext
	.type t_setcontext, @function
t_setcontext:
	.cfi_startproc
	movq %rdi, %rdx
	.cfi_def_cfa %rdx, 0
	.cfi_offset %rbx, 128
	.cfi_offset %rsp, 160
	.cfi_offset %rip, 168
	movq 160(%rdx), %rsp
	ret
	.cfi_endproc
	.size t_setcontext, .-t_setcontext

/* Class 1: SP stored while the CFA is rsp+8: the slot holds CFA-8, so the
 * caller's SP per DWARF is CFA-8.
 * expect: t_sp_saved_entry skip sp-rule */
	.globl t_sp_saved_entry
	.type t_sp_saved_entry, @function
t_sp_saved_entry:
	.cfi_startproc
	movq %rsp, -16(%rsp)
	.cfi_offset %rsp, -24
	ret
	.cfi_endproc
	.size t_sp_saved_entry, .-t_sp_saved_entry

/* Class 1: "same value" for SP while the CFA is rsp+8.
 * expect: t_sp_same skip sp-rule */
	.globl t_sp_same
	.type t_sp_same, @function
t_sp_same:
	.cfi_startproc
	nop
	.cfi_same_value %rsp
	ret
	.cfi_endproc
	.size t_sp_same, .-t_sp_same

/* Class 1: push %rsp: CFA offset and SP save in one step.
 * expect: t_sp_push skip sp-rule */
	.globl t_sp_push
	.type t_sp_push, @function
t_sp_push:
	.cfi_startproc
	pushq %rsp
	.cfi_def_cfa_offset 16
	.cfi_offset %rsp, -16
	popq %rsp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size t_sp_push, .-t_sp_push

/* The SP rule SFrame assumes, stated explicitly.
 * expect: t_sp_val0 converted */
	.globl t_sp_val0
	.type t_sp_val0, @function
t_sp_val0:
	.cfi_startproc
	nop
	.cfi_val_offset %rsp, 0
	ret
	.cfi_endproc
	.size t_sp_val0, .-t_sp_val0

/* A signal trampoline like glibc's __restore_rt: CFA = *(rsp+160), SP
 * restored from that same slot, RA at *(rsp+168), rbp at *(rsp+56);
 * signal frame. A flexible FDE says exactly this.
 * expect: t_sigtramp converted flex */
	.globl t_sigtramp
	.type t_sigtramp, @function
t_sigtramp:
	.cfi_startproc simple
	.cfi_signal_frame
	.cfi_escape 0x0f, 0x04, 0x77, 0xa0, 0x01, 0x06 /* CFA: breg7 160; deref */
	.cfi_escape 0x10, 0x07, 0x03, 0x77, 0xa0, 0x01 /* rsp at breg7 160 */
	.cfi_escape 0x10, 0x10, 0x03, 0x77, 0xa8, 0x01 /* rip at breg7 168 */
	.cfi_escape 0x10, 0x06, 0x02, 0x77, 0x38       /* rbp at breg7 56 */
	movq $15, %rax
	syscall
	.cfi_endproc
	.size t_sigtramp, .-t_sigtramp

/* Class 2: the CIE's return column is r12, not rip; with no rule for
 * r12 the return address is r12's value (flexible FDE: RA = r12).
 * expect: t_retcol_r12 converted flex */
	.globl t_retcol_r12
	.type t_retcol_r12, @function
t_retcol_r12:
	.cfi_startproc simple
	.cfi_return_column %r12
	.cfi_def_cfa %rsp, 8
	jmp *%r12
	.cfi_endproc
	.size t_retcol_r12, .-t_retcol_r12

/* Class 5 on x86-64: RA at CFA+0 needs a flexible FDE (control word 2).
 * expect: t_ra_cfa0 converted flex */
	.globl t_ra_cfa0
	.type t_ra_cfa0, @function
t_ra_cfa0:
	.cfi_startproc
	subq $8, %rsp
	.cfi_def_cfa_offset 16
	.cfi_offset %rip, 0
	addq $8, %rsp
	.cfi_def_cfa_offset 8
	.cfi_offset %rip, -8
	ret
	.cfi_endproc
	.size t_ra_cfa0, .-t_ra_cfa0

/* Class 6: CFA from rip (DWARF register 16).
 * expect: t_cfa_rip skip pc-relative */
	.globl t_cfa_rip
	.type t_cfa_rip, @function
t_cfa_rip:
	.cfi_startproc
	nop
	.cfi_def_cfa 16, 8
	ret
	.cfi_endproc
	.size t_cfa_rip, .-t_cfa_rip

/* Class 6: FP at an address computed from rip.
 * expect: t_fp_rip skip pc-relative */
	.globl t_fp_rip
	.type t_fp_rip, @function
t_fp_rip:
	.cfi_startproc
	nop
	.cfi_escape 0x10, 0x06, 0x02, 0x80, 0x10 /* rbp at breg16 16 */
	ret
	.cfi_endproc
	.size t_fp_rip, .-t_fp_rip

/* FP kept in rbx: flexible FDE, FP word pair after the RA padding word.
 * expect: t_fp_in_rbx converted flex */
	.globl t_fp_in_rbx
	.type t_fp_in_rbx, @function
t_fp_in_rbx:
	.cfi_startproc
	movq %rbp, %rbx
	.cfi_register %rbp, %rbx
	movq %rbx, %rbp
	.cfi_restore %rbp
	ret
	.cfi_endproc
	.size t_fp_in_rbx, .-t_fp_in_rbx

/* DRAP as GCC emits it: CFA from r10, then *(rbp-8); rbp at *(rbp+0).
 * expect: t_drap converted flex */
	.globl t_drap
	.type t_drap, @function
t_drap:
	.cfi_startproc
	leaq 8(%rsp), %r10
	.cfi_def_cfa %r10, 0
	andq $-64, %rsp
	pushq -8(%r10)
	pushq %rbp
	movq %rsp, %rbp
	.cfi_escape 0x10, 0x06, 0x02, 0x76, 0x00       /* rbp at breg6 0 */
	pushq %r10
	.cfi_escape 0x0f, 0x03, 0x76, 0x78, 0x06       /* CFA: breg6 -8; deref */
	popq %r10
	.cfi_def_cfa %r10, 0
	popq %rbp
	leaq -8(%r10), %rsp
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
	.size t_drap, .-t_drap

/* A signal frame ('S') with ordinary rules.
 * expect: t_signal_plain converted */
	.globl t_signal_plain
	.type t_signal_plain, @function
t_signal_plain:
	.cfi_startproc
	.cfi_signal_frame
	pushq %rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	popq %rbp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size t_signal_plain, .-t_signal_plain

/* The FP save moves while the CFA stays: two rows that differ only in
 * the FP word.
 * expect: t_fp_moves converted */
	.globl t_fp_moves
	.type t_fp_moves, @function
t_fp_moves:
	.cfi_startproc
	pushq %rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	movq %rbp, -8(%rsp)
	.cfi_offset %rbp, -24
	popq %rbp
	.cfi_def_cfa_offset 8
	.cfi_restore %rbp
	ret
	.cfi_endproc
	.size t_fp_moves, .-t_fp_moves

/* Outermost frame: RA undefined.
 * expect: t_outermost converted */
	.globl t_outermost
	.type t_outermost, @function
t_outermost:
	.cfi_startproc
	.cfi_undefined %rip
	xorl %ebp, %ebp
	hlt
	.cfi_endproc
	.size t_outermost, .-t_outermost
	.section .note.GNU-stack,"",@progbits
