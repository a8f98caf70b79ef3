/* Unwind-truth classes, s390x (issue #10); see x86_64.S for the
 * "expect:" convention. DWARF regs: r0 0, r11 11 (FP), r14 14 (RA),
 * r15 15 (SP), f0 16. The CFA is SP + 160 at entry; SFrame's caller SP
 * is CFA - 160. */
	.text

/* The usual prologue: stmg saves r15 while the CFA is r15+160, so the
 * slot holds CFA-160, the caller's SP.
 * expect: s_prologue converted */
	.globl s_prologue
	.type s_prologue, @function
s_prologue:
	.cfi_startproc
	stmg %r6,%r15,48(%r15)
	.cfi_offset 6, -112
	.cfi_offset 11, -72
	.cfi_offset 14, -48
	.cfi_offset 15, -40
	aghi %r15,-160
	.cfi_def_cfa_offset 320
	lmg %r6,%r15,208(%r15)
	.cfi_restore 15
	.cfi_restore 14
	.cfi_restore 11
	.cfi_restore 6
	.cfi_def_cfa_offset 160
	br %r14
	.cfi_endproc
	.size s_prologue, .-s_prologue

/* A mid-function epilogue, after which GCC restates the prologue's CFA
 * and saves in one step (glibc's fgets_unlocked has this shape): the
 * restated r15 save is the prologue's slot.
 * expect: s_restated converted */
	.globl s_restated
	.type s_restated, @function
s_restated:
	.cfi_startproc
	stmg %r14,%r15,112(%r15)
	.cfi_offset 14, -48
	.cfi_offset 15, -40
	aghi %r15,-160
	.cfi_def_cfa_offset 320
	cgije %r2,0,1f
	lmg %r14,%r15,272(%r15)
	.cfi_remember_state
	.cfi_restore 15
	.cfi_restore 14
	.cfi_def_cfa_offset 160
	br %r14
	.cfi_restore_state
1:	lghi %r2,1
	lmg %r14,%r15,272(%r15)
	.cfi_restore 15
	.cfi_restore 14
	.cfi_def_cfa_offset 160
	br %r14
	.cfi_def_cfa_offset 320
	.cfi_offset 14, -48
	.cfi_offset 15, -40
	lghi %r2,2
	j 1b
	.cfi_endproc
	.size s_restated, .-s_restated

/* Class 1: r15 stored after the frame was allocated: the slot holds
 * CFA-320.
 * expect: s_r15_after_alloc skip sp-rule */
	.globl s_r15_after_alloc
	.type s_r15_after_alloc, @function
s_r15_after_alloc:
	.cfi_startproc
	aghi %r15,-160
	.cfi_def_cfa_offset 320
	stg %r15,8(%r15)
	.cfi_offset 15, -312
	aghi %r15,160
	.cfi_def_cfa_offset 160
	.cfi_restore 15
	br %r14
	.cfi_endproc
	.size s_r15_after_alloc, .-s_r15_after_alloc

/* Class 1: the save and the frame allocation described in one step:
 * which came first is unknown.
 * expect: s_r15_same_step skip sp-rule */
	.globl s_r15_same_step
	.type s_r15_same_step, @function
s_r15_same_step:
	.cfi_startproc
	stmg %r14,%r15,112(%r15)
	aghi %r15,-160
	.cfi_def_cfa_offset 320
	.cfi_offset 14, -48
	.cfi_offset 15, -40
	lmg %r14,%r15,272(%r15)
	.cfi_restore 15
	.cfi_restore 14
	.cfi_def_cfa_offset 160
	br %r14
	.cfi_endproc
	.size s_r15_same_step, .-s_r15_same_step

/* Leaf code parks r15 in f0 before allocating (as GCC does): f0 holds
 * CFA-160.
 * expect: s_leaf_fpr converted */
	.globl s_leaf_fpr
	.type s_leaf_fpr, @function
s_leaf_fpr:
	.cfi_startproc
	ldgr %f0,%r15
	.cfi_register 15, 16
	aghi %r15,-160
	.cfi_def_cfa_offset 320
	lgdr %r15,%f0
	.cfi_restore 15
	.cfi_def_cfa_offset 160
	br %r14
	.cfi_endproc
	.size s_leaf_fpr, .-s_leaf_fpr

/* Class 1: r15 copied to r0 after the frame was allocated.
 * expect: s_r15_r0_after skip sp-rule */
	.globl s_r15_r0_after
	.type s_r15_r0_after, @function
s_r15_r0_after:
	.cfi_startproc
	aghi %r15,-160
	.cfi_def_cfa_offset 320
	lgr %r0,%r15
	.cfi_register 15, 0
	aghi %r15,160
	.cfi_def_cfa_offset 160
	.cfi_restore 15
	br %r14
	.cfi_endproc
	.size s_r15_r0_after, .-s_r15_r0_after

/* Class 2, glibc 2.36 __fentry__: CIE return column r0. With no rule for
 * r0 the return address is r0's value, later *(CFA-208): a flexible FDE
 * says both (RA = r0, then RA = *(CFA-208)).
 * expect: s_retcol_r0 converted flex */
	.globl s_retcol_r0
	.type s_retcol_r0, @function
s_retcol_r0:
	.cfi_startproc
	.cfi_return_column 0
	aghi %r15,-224
	.cfi_def_cfa_offset 384
	stg %r0,16(%r15)
	.cfi_offset 0, -208
	lg %r0,16(%r15)
	aghi %r15,224
	.cfi_def_cfa_offset 160
	.cfi_restore 0
	br %r0
	.cfi_endproc
	.size s_retcol_r0, .-s_retcol_r0

/* Class 5: RA at CFA+0: in a default FRE an RA word 0 means "RA not
 * saved", so this needs a flexible FDE.
 * expect: s_ra_cfa0 converted flex */
	.globl s_ra_cfa0
	.type s_ra_cfa0, @function
s_ra_cfa0:
	.cfi_startproc
	aghi %r15,-160
	.cfi_def_cfa_offset 320
	stg %r14,320(%r15)
	.cfi_offset 14, 0
	lg %r14,320(%r15)
	.cfi_restore 14
	aghi %r15,160
	.cfi_def_cfa_offset 160
	br %r14
	.cfi_endproc
	.size s_ra_cfa0, .-s_ra_cfa0

/* A CFA offset SFrame's s390x scaling cannot hold: (164 - 160) % 8 != 0.
 * expect: s_cfa_164 skip cfa-offset-unaligned */
	.globl s_cfa_164
	.type s_cfa_164, @function
s_cfa_164:
	.cfi_startproc
	aghi %r15,-4
	.cfi_def_cfa_offset 164
	aghi %r15,4
	.cfi_def_cfa_offset 160
	br %r14
	.cfi_endproc
	.size s_cfa_164, .-s_cfa_164

/* Outermost frame.
 * expect: s_outermost converted */
	.globl s_outermost
	.type s_outermost, @function
s_outermost:
	.cfi_startproc
	.cfi_undefined 14
	lghi %r11,0
	j s_outermost
	.cfi_endproc
	.size s_outermost, .-s_outermost
	.section .note.GNU-stack,"",@progbits
