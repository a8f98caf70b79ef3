	.text
	.globl f1
	.type f1,@function
f1:
	.cfi_startproc
	pushq %rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	movq %rsp, %rbp
	.cfi_def_cfa_register %rbp
	nop
	popq %rbp
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
	.size f1,.-f1
	.globl f2
	.type f2,@function
f2:
	.cfi_startproc
	subq $8, %rsp
	.cfi_def_cfa_offset 16
	call f1
	addq $8, %rsp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size f2,.-f2
