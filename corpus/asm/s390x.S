/* Hand-written s390x CFI: leaf functions keeping r14/r15/r11 in FPRs
 * (DW_CFA_register to f-registers), an stmg prologue with offsets for
 * r6-r15, a frame pointer in r11. DWARF regs: r0-r15 0-15, then FPRs
 * 16-31 in the order f0,f2,f4,f6,f1,f3,f5,f7,f8,f10,f12,f14,f9,... */
	.text
	.globl asm_anchor
	.type asm_anchor, @function
asm_anchor:
	.cfi_startproc
	br %r14
	.cfi_endproc
	.size asm_anchor, .-asm_anchor

	.globl s_fprleaf
	.type s_fprleaf, @function
s_fprleaf:
	.cfi_startproc
	ldgr %f0, %r14
	.cfi_register 14, 16
	ldgr %f2, %r15
	.cfi_register 15, 17
	ldgr %f4, %r11
	.cfi_register 11, 18
	aghi %r15, -160
	.cfi_def_cfa_offset 320
	lgdr %r15, %f2
	.cfi_restore 15
	.cfi_def_cfa_offset 160
	lgdr %r11, %f4
	.cfi_restore 11
	lgdr %r14, %f0
	.cfi_restore 14
	br %r14
	.cfi_endproc
	.size s_fprleaf, .-s_fprleaf

	.globl s_stmg
	.type s_stmg, @function
s_stmg:
	.cfi_startproc
	stmg %r6, %r15, 48(%r15)
	.cfi_offset 6, -112
	.cfi_offset 7, -104
	.cfi_offset 8, -96
	.cfi_offset 9, -88
	.cfi_offset 10, -80
	.cfi_offset 11, -72
	.cfi_offset 12, -64
	.cfi_offset 13, -56
	.cfi_offset 14, -48
	.cfi_offset 15, -40
	aghi %r15, -176
	.cfi_def_cfa_offset 336
	lgr %r11, %r15
	.cfi_def_cfa_register 11
	ltgr %r2, %r2
	je 1f
	.cfi_remember_state
	lmg %r6, %r15, 224(%r11)
	.cfi_restore 15
	.cfi_restore 14
	.cfi_restore 13
	.cfi_restore 12
	.cfi_restore 11
	.cfi_restore 10
	.cfi_restore 9
	.cfi_restore 8
	.cfi_restore 7
	.cfi_restore 6
	.cfi_def_cfa 15, 160
	br %r14
	.cfi_restore_state
1:	lghi %r2, 1
	lmg %r6, %r15, 224(%r11)
	.cfi_def_cfa 15, 160
	br %r14
	.cfi_endproc
	.size s_stmg, .-s_stmg

	.globl s_misc
	.type s_misc, @function
s_misc:
	.cfi_startproc
	lgr %r1, %r14
	.cfi_register 14, 1
	nop
	.cfi_undefined 14
	nop
	.cfi_same_value 14
	nop
	.cfi_val_offset 11, -8
	lgr %r14, %r1
	.cfi_restore 14
	.cfi_restore 11
	br %r14
	.cfi_endproc
	.size s_misc, .-s_misc

	.section .note.GNU-stack,"",@progbits
