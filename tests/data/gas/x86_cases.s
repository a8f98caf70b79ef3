	.text
	.globl sig
	.type sig,@function
sig:
	.cfi_startproc
	.cfi_signal_frame
	nop
	ret
	.cfi_endproc
	.size sig,.-sig

	.globl outer
	.type outer,@function
outer:
	.cfi_startproc
	.cfi_undefined %rip
	xorl %ebp, %ebp
	call sig
	hlt
	.cfi_endproc
	.size outer,.-outer

	.globl drap
	.type drap,@function
drap:
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
	nop
	popq %r10
	.cfi_def_cfa %r10, 0
	popq %rbp
	leaq -8(%r10), %rsp
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
	.size drap,.-drap

	.globl big
	.type big,@function
big:
	.cfi_startproc
	subq $70000, %rsp
	.cfi_def_cfa_offset 70008
	.fill 300, 1, 0x90
	addq $70000, %rsp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size big,.-big

	.globl bug
	.type bug,@function
bug:
	.cfi_startproc
	pushq %rbp
	.cfi_def_cfa_offset 16
	.cfi_def_cfa_register %rbp
	.cfi_offset %rbp, -16
	nop
	leave
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
	.size bug,.-bug

	.globl rareg
	.type rareg,@function
rareg:
	.cfi_startproc
	pushq %rbp
	.cfi_def_cfa_offset 16
	.cfi_register %rbp, %rbx
	nop
	ret
	.cfi_endproc
	.size rareg,.-rareg

	.globl rsp_other
	.type rsp_other,@function
rsp_other:
	.cfi_startproc
	movq %rsp, %rbx
	.cfi_def_cfa_register %rbx
	nop
	ret
	.cfi_endproc
	.size rsp_other,.-rsp_other

	.globl ra_saved
	.type ra_saved,@function
ra_saved:
	.cfi_startproc
	subq $8,%rsp
	.cfi_def_cfa_offset 16
	.cfi_offset %rip, -16
	nop
	ret
	.cfi_endproc
	.size ra_saved,.-ra_saved

	.section .text.other,"ax",@progbits
	.globl other
	.type other,@function
other:
	.cfi_startproc
	ret
	.cfi_endproc
	.size other,.-other
