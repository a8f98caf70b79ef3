/* Symbolic values for the verifier: what a caller's register holds,
 * written over the callee's registers and memory.
 *
 * A value is a base (a constant 0 or register R[reg]) followed by up to
 * VF_MAX_DEREF (add, dereference) steps and a final add:
 *   ((base + off[0]) deref + off[1]) deref ... + off[nderef]
 * Sums of two registers, products and the like have no such form: they
 * become OPAQUE, which equals nothing (not even itself), so a row whose
 * truth is opaque can never "match" an SFrame row. */
#ifndef E2S_VF_VAL_H
#define E2S_VF_VAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VF_MAX_DEREF 3

enum {
	VF_CONST = 0, /* base 0: a number (or memory at a constant address) */
	VF_REG,       /* base: the callee's register reg */
	VF_OPAQUE,    /* not representable */
	VF_UNDEF,     /* DW_CFA_undefined */
};

typedef struct {
	uint8_t kind;
	uint8_t nderef;
	uint16_t reg;
	uint32_t pad_;
	int64_t off[VF_MAX_DEREF + 1];
} vf_val;

vf_val vf_const(int64_t c);
vf_val vf_reg(unsigned reg);
vf_val vf_opaque(void);
vf_val vf_undef(void);
/* v + k (wrapping, as the machine adds). */
vf_val vf_add(vf_val v, int64_t k);
/* The address-sized word at address v. */
vf_val vf_deref(vf_val v);
/* a + b and a - b: exact when one side is a plain constant, or (minus)
 * when both sides differ only in their last offset. */
vf_val vf_plus(vf_val a, vf_val b);
vf_val vf_minus(vf_val a, vf_val b);
/* A plain number (no register, no memory). */
bool vf_is_const(const vf_val *v, int64_t *c);
bool vf_is_known(const vf_val *v); /* neither OPAQUE nor UNDEF */
/* Structural equality; OPAQUE and UNDEF equal nothing. */
bool vf_eq(const vf_val *a, const vf_val *b);
/* If v == [*](base + k) with base the value b, set *k and *deref. */
bool vf_rel(const vf_val *v, const vf_val *b, int64_t *k, bool *deref);
/* Text like "*(rsp+8)-16"; registers named for abi (a abi_id). */
void vf_str(const vf_val *v, int abi, char *buf, size_t len);
const char *vf_reg_name(int abi, unsigned reg, char *buf,
			size_t len);

#endif
