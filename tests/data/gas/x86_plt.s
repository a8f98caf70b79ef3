	.text
	.globl f
	.type f,@function
f:	.cfi_startproc
	subq $8,%rsp
	.cfi_def_cfa_offset 16
	call ext1@PLT
	call ext2@PLT
	addq $8,%rsp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size f,.-f
