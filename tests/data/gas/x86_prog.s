	.file	"x86_prog.c"
	.text
	.p2align 4
	.type	cmp, @function
cmp:
.LFB22:
	.cfi_startproc
	movl	(%rdi), %eax
	subl	(%rsi), %eax
	ret
	.cfi_endproc
.LFE22:
	.size	cmp, .-cmp
	.p2align 4
	.globl	work
	.type	work, @function
work:
.LFB23:
	.cfi_startproc
	pushq	%r12
	.cfi_def_cfa_offset 16
	.cfi_offset 12, -16
	pushq	%rbp
	.cfi_def_cfa_offset 24
	.cfi_offset 6, -24
	movslq	%edi, %rbp
	pushq	%rbx
	.cfi_def_cfa_offset 32
	.cfi_offset 3, -32
	leaq	0(,%rbp,4), %rdi
	movq	%rbp, %rbx
	call	malloc@PLT
	movq	%rax, %r12
	testl	%ebp, %ebp
	jle	.L4
	leal	-1(%rbp), %eax
	cmpl	$2, %eax
	jbe	.L8
	movl	%ebp, %edx
	movl	$680390859, %edi
	movdqa	.LC0(%rip), %xmm3
	movq	%r12, %rax
	shrl	$2, %edx
	movd	%edi, %xmm4
	movl	$4, %edi
	movl	%edx, %ecx
	pshufd	$0, %xmm4, %xmm4
	movdqa	%xmm4, %xmm5
	movd	%edi, %xmm6
	salq	$4, %rcx
	psrad	$31, %xmm5
	pshufd	$0, %xmm6, %xmm6
	addq	%r12, %rcx
	.p2align 4
	.p2align 3
.L6:
	movdqa	%xmm3, %xmm0
	movdqa	%xmm5, %xmm7
	movdqa	%xmm5, %xmm8
	addq	$16, %rax
	pslld	$5, %xmm0
	psubd	%xmm3, %xmm0
	pslld	$4, %xmm0
	psubd	%xmm3, %xmm0
	pslld	$4, %xmm0
	psubd	%xmm3, %xmm0
	paddd	%xmm6, %xmm3
	movdqa	%xmm0, %xmm2
	pmuludq	%xmm0, %xmm7
	movdqa	%xmm0, %xmm1
	psrad	$31, %xmm2
	pmuludq	%xmm4, %xmm1
	pmuludq	%xmm4, %xmm2
	paddq	%xmm7, %xmm2
	psllq	$32, %xmm2
	paddq	%xmm2, %xmm1
	movdqa	%xmm0, %xmm2
	psrlq	$32, %xmm2
	movdqa	%xmm2, %xmm7
	pmuludq	%xmm2, %xmm8
	psrad	$31, %xmm7
	pmuludq	%xmm4, %xmm2
	pmuludq	%xmm4, %xmm7
	paddq	%xmm8, %xmm7
	psllq	$32, %xmm7
	paddq	%xmm7, %xmm2
	shufps	$221, %xmm2, %xmm1
	pshufd	$216, %xmm1, %xmm1
	psrad	$4, %xmm1
	movdqa	%xmm1, %xmm2
	pslld	$1, %xmm2
	paddd	%xmm1, %xmm2
	pslld	$3, %xmm2
	paddd	%xmm1, %xmm2
	pslld	$2, %xmm2
	paddd	%xmm2, %xmm1
	psubd	%xmm1, %xmm0
	movups	%xmm0, -16(%rax)
	cmpq	%rcx, %rax
	jne	.L6
	sall	$2, %edx
	cmpl	%edx, %ebx
	je	.L4
.L5:
	movl	%edx, %ecx
	imull	$7919, %edx, %edx
.L7:
	movslq	%edx, %rax
	movl	%edx, %esi
	imulq	$680390859, %rax, %rax
	sarl	$31, %esi
	sarq	$36, %rax
	subl	%esi, %eax
	movl	%edx, %esi
	addl	$7919, %edx
	imull	$101, %eax, %eax
	subl	%eax, %esi
	movl	%esi, (%r12,%rcx,4)
	addq	$1, %rcx
	cmpl	%ecx, %ebx
	jg	.L7
.L4:
	movq	%rbp, %rsi
	movq	%r12, %rdi
	movl	$4, %edx
	leaq	cmp(%rip), %rcx
	call	qsort@PLT
	movl	%ebx, %eax
	movq	%r12, %rdi
	shrl	$31, %eax
	addl	%ebx, %eax
	sarl	%eax
	cltq
	movl	(%r12,%rax,4), %ebx
	call	free@PLT
	movl	%ebx, %eax
	popq	%rbx
	.cfi_remember_state
	.cfi_def_cfa_offset 24
	popq	%rbp
	.cfi_def_cfa_offset 16
	popq	%r12
	.cfi_def_cfa_offset 8
	ret
.L8:
	.cfi_restore_state
	xorl	%edx, %edx
	jmp	.L5
	.cfi_endproc
.LFE23:
	.size	work, .-work
	.section	.rodata.str1.1,"aMS",@progbits,1
.LC3:
	.string	"%d %zu\n"
	.section	.text.startup,"ax",@progbits
	.p2align 4
	.globl	main
	.type	main, @function
main:
.LFB24:
	.cfi_startproc
	pushq	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset 6, -16
	pushq	%rbx
	.cfi_def_cfa_offset 24
	.cfi_offset 3, -24
	movl	%edi, %ebx
	subq	$8, %rsp
	.cfi_def_cfa_offset 32
	movq	(%rsi), %rdi
	call	strlen@PLT
	imull	$100, %ebx, %edi
	movq	%rax, %rbp
	call	work
	movq	%rbp, %rdx
	leaq	.LC3(%rip), %rdi
	movl	%eax, %esi
	xorl	%eax, %eax
	call	printf@PLT
	addq	$8, %rsp
	.cfi_def_cfa_offset 24
	xorl	%eax, %eax
	popq	%rbx
	.cfi_def_cfa_offset 16
	popq	%rbp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
.LFE24:
	.size	main, .-main
	.section	.rodata.cst16,"aM",@progbits,16
	.align 16
.LC0:
	.long	0
	.long	1
	.long	2
	.long	3
	.ident	"GCC: (Debian 16.2.0-4) 16.2.0"
	.section	.note.GNU-stack,"",@progbits
