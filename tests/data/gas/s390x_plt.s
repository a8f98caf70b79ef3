	.text
	.globl f
	.type f,@function
f:	.cfi_startproc
	stmg %r14,%r15,112(%r15)
	.cfi_offset 14, -48
	.cfi_offset 15, -40
	aghi %r15,-160
	.cfi_def_cfa_offset 320
	brasl %r14,ext1@PLT
	brasl %r14,ext2@PLT
	lmg %r14,%r15,272(%r15)
	.cfi_restore 15
	.cfi_restore 14
	.cfi_def_cfa_offset 160
	br %r14
	.cfi_endproc
	.size f,.-f
