/* Symbolic values (see vf_val.h). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "../elf/elfr_cfi.h"
#include "vf_val.h"

vf_val vf_const(int64_t c)
{
	vf_val v;
	memset(&v, 0, sizeof v);
	v.kind = VF_CONST;
	v.off[0] = c;
	return v;
}

vf_val vf_reg(unsigned reg)
{
	vf_val v;
	memset(&v, 0, sizeof v);
	v.kind = VF_REG;
	v.reg = (uint16_t)reg;
	return v;
}

vf_val vf_opaque(void)
{
	vf_val v;
	memset(&v, 0, sizeof v);
	v.kind = VF_OPAQUE;
	return v;
}

vf_val vf_undef(void)
{
	vf_val v;
	memset(&v, 0, sizeof v);
	v.kind = VF_UNDEF;
	return v;
}

bool vf_is_known(const vf_val *v)
{
	return v->kind == VF_CONST || v->kind == VF_REG;
}

vf_val vf_add(vf_val v, int64_t k)
{
	if (!vf_is_known(&v))
		return v;
	v.off[v.nderef] = (int64_t)((uint64_t)v.off[v.nderef] + (uint64_t)k);
	return v;
}

vf_val vf_deref(vf_val v)
{
	if (!vf_is_known(&v))
		return v;
	if (v.nderef == VF_MAX_DEREF)
		return vf_opaque();
	v.nderef++;
	v.off[v.nderef] = 0;
	return v;
}

bool vf_is_const(const vf_val *v, int64_t *c)
{
	if (v->kind != VF_CONST || v->nderef != 0)
		return false;
	*c = v->off[0];
	return true;
}

vf_val vf_plus(vf_val a, vf_val b)
{
	int64_t c;
	if (vf_is_const(&b, &c))
		return vf_add(a, c);
	if (vf_is_const(&a, &c))
		return vf_add(b, c);
	return vf_opaque();
}

/* Same base and steps, last offset aside. */
static bool same_shape(const vf_val *a, const vf_val *b)
{
	if (!vf_is_known(a) || a->kind != b->kind || a->nderef != b->nderef)
		return false;
	if (a->kind == VF_REG && a->reg != b->reg)
		return false;
	for (unsigned i = 0; i < a->nderef; i++)
		if (a->off[i] != b->off[i])
			return false;
	return true;
}

vf_val vf_minus(vf_val a, vf_val b)
{
	int64_t c;
	if (vf_is_const(&b, &c))
		return vf_add(a, (int64_t)(0 - (uint64_t)c));
	if (same_shape(&a, &b))
		return vf_const((int64_t)((uint64_t)a.off[a.nderef] -
					  (uint64_t)b.off[b.nderef]));
	return vf_opaque();
}

bool vf_eq(const vf_val *a, const vf_val *b)
{
	return same_shape(a, b) && a->off[a->nderef] == b->off[b->nderef];
}

bool vf_rel(const vf_val *v, const vf_val *b, int64_t *k, bool *deref)
{
	vf_val d = vf_minus(*v, *b);
	if (vf_is_const(&d, k)) {
		*deref = false;
		return true;
	}
	if (!vf_is_known(v) || v->nderef == 0 || v->off[v->nderef] != 0)
		return false;
	vf_val in = *v;
	in.off[in.nderef] = 0;
	in.nderef--;
	d = vf_minus(in, *b);
	if (!vf_is_const(&d, k))
		return false;
	*deref = true;
	return true;
}

static const char *const amd64_names[17] = {
	"rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp", "r8",
	"r9", "r10", "r11", "r12", "r13", "r14", "r15", "rip",
};

const char *vf_reg_name(int abi, unsigned reg, char *buf, size_t len)
{
	if (abi == ABI_AMD64 && reg < 17)
		return amd64_names[reg];
	if (abi == ABI_AARCH64 && reg <= 31)
		snprintf(buf, len, reg == 31 ? "sp" : "x%u", reg);
	else if (abi == ABI_S390X && reg <= 31)
		snprintf(buf, len, reg < 16 ? "r%u" : "f%u", reg % 16);
	else
		snprintf(buf, len, "reg%u", reg);
	return buf;
}

static void put_off(char *buf, size_t len, size_t *n, int64_t off, bool first)
{
	if (*n >= len)
		return;
	int w;
	if (first)
		w = snprintf(buf + *n, len - *n, "%" PRId64, off);
	else if (off)
		w = snprintf(buf + *n, len - *n, "%+" PRId64, off);
	else
		w = 0;
	if (w > 0)
		*n += (size_t)w;
}

void vf_str(const vf_val *v, int abi, char *buf, size_t len)
{
	char rn[16];
	size_t n = 0;
	if (!len)
		return;
	buf[0] = '\0';
	if (v->kind == VF_OPAQUE) {
		snprintf(buf, len, "(no simple form)");
		return;
	}
	if (v->kind == VF_UNDEF) {
		snprintf(buf, len, "undefined");
		return;
	}
	for (unsigned i = 0; i < v->nderef; i++)
		if (n < len)
			n += (size_t)snprintf(buf + n, len - n, "*(");
	for (unsigned i = 0; i <= v->nderef; i++) {
		if (i == 0 && v->kind == VF_REG) {
			if (n < len)
				n += (size_t)snprintf(buf + n, len - n, "%s",
					vf_reg_name(abi, v->reg, rn, sizeof rn));
			put_off(buf, len, &n, v->off[0], false);
		} else {
			put_off(buf, len, &n, v->off[i], i == 0);
		}
		if (i < v->nderef && n < len)
			n += (size_t)snprintf(buf + n, len - n, ")");
	}
}
