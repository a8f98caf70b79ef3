/* DWARF expressions of CFA and register rules, evaluated over symbolic
 * values (DWARF 5 section 2.5). Operations with a symbolic operand and
 * no exact symbolic result (products, masks, comparisons of registers)
 * give OPAQUE; a branch on an opaque condition makes the whole result
 * OPAQUE. Register 16 on AMD64 reads as the PC being checked (the x86-64
 * psABI's return-address column, which in the callee frame holds the
 * current instruction address): that is how GNU ld's PLT expression
 * rsp + 8 + ((rip & 15) >= K) << 3 evaluates. */
#include <string.h>

#include "../common/reader.h"
#include "vf_int.h"

enum {
	OP_addr = 0x03, OP_deref = 0x06, OP_const1u = 0x08, OP_const1s,
	OP_const2u, OP_const2s, OP_const4u, OP_const4s, OP_const8u,
	OP_const8s, OP_constu, OP_consts, OP_dup, OP_drop, OP_over, OP_pick,
	OP_swap, OP_rot, OP_xderef, OP_abs, OP_and, OP_div, OP_minus, OP_mod,
	OP_mul, OP_neg, OP_not, OP_or, OP_plus, OP_plus_uconst, OP_shl,
	OP_shr, OP_shra, OP_xor, OP_bra, OP_eq, OP_ge, OP_gt, OP_le, OP_lt,
	OP_ne, OP_skip, OP_lit0 = 0x30, OP_lit31 = 0x4f, OP_reg0 = 0x50,
	OP_reg31 = 0x6f, OP_breg0 = 0x70, OP_breg31 = 0x8f, OP_regx = 0x90,
	OP_fbreg, OP_bregx, OP_piece, OP_deref_size, OP_nop = 0x96,
};

#define VF_STACK 64
#define VF_STEPS 4096 /* bound on executed operations (loops via bra) */

vf_val vf_regval(vf_eval *e, unsigned reg)
{
	if (e->a->pc_is_reg16 && reg == 16) {
		e->used_pc = true;
		return vf_const((int64_t)e->pc);
	}
	return vf_reg(reg);
}

/* Both operands plain numbers: apply op, else OPAQUE. */
static vf_val arith(uint8_t op, vf_val a, vf_val b)
{
	int64_t x, y;
	if (op == OP_plus)
		return vf_plus(a, b);
	if (op == OP_minus)
		return vf_minus(a, b);
	if (!vf_is_const(&a, &x) || !vf_is_const(&b, &y))
		return vf_opaque();
	uint64_t ux = (uint64_t)x, uy = (uint64_t)y;
	switch (op) {
	case OP_and: return vf_const((int64_t)(ux & uy));
	case OP_or: return vf_const((int64_t)(ux | uy));
	case OP_xor: return vf_const((int64_t)(ux ^ uy));
	case OP_mul: return vf_const((int64_t)(ux * uy));
	case OP_div:
		if (y == 0 || (x == INT64_MIN && y == -1))
			return vf_opaque();
		return vf_const(x / y);
	case OP_mod:
		if (uy == 0)
			return vf_opaque();
		return vf_const((int64_t)(ux % uy));
	case OP_shl: return vf_const(uy >= 64 ? 0 : (int64_t)(ux << uy));
	case OP_shr: return vf_const(uy >= 64 ? 0 : (int64_t)(ux >> uy));
	case OP_shra:
		if (uy >= 64)
			return vf_const(x < 0 ? -1 : 0);
		return vf_const(x < 0 ? (int64_t)~(~ux >> uy) : (int64_t)(ux >> uy));
	case OP_eq: return vf_const(x == y);
	case OP_ne: return vf_const(x != y);
	case OP_ge: return vf_const(x >= y);
	case OP_gt: return vf_const(x > y);
	case OP_le: return vf_const(x <= y);
	case OP_lt: return vf_const(x < y);
	default: return vf_opaque();
	}
}

vf_val vf_eval_expr(vf_eval *e, uint32_t off, uint32_t len,
		    const vf_val *push)
{
	vf_val st[VF_STACK];
	unsigned n = 0, steps = 0;
	br_t r;
	if ((uint64_t)off + len > e->size)
		return vf_opaque();
	br_init(&r, e->data, (size_t)off + len, e->big_endian);
	br_seek(&r, off);
	if (push)
		st[n++] = *push;
	while (!br_at_end(&r)) {
		if (++steps > VF_STEPS)
			return vf_opaque();
		uint8_t op = br_u8(&r);
		vf_val v;
		int64_t c;
		if (op >= OP_lit0 && op <= OP_lit31) {
			v = vf_const(op - OP_lit0);
		} else if (op >= OP_breg0 && op <= OP_breg31) {
			int64_t k = br_sleb(&r);
			v = vf_add(vf_regval(e, op - OP_breg0), k);
		} else {
			switch (op) {
			case OP_addr:
				v = vf_const((int64_t)br_uN(&r, e->addr_size));
				break;
			case OP_const1u: v = vf_const(br_u8(&r)); break;
			case OP_const1s: v = vf_const(br_sN(&r, 1)); break;
			case OP_const2u: v = vf_const(br_u16(&r)); break;
			case OP_const2s: v = vf_const(br_sN(&r, 2)); break;
			case OP_const4u: v = vf_const(br_u32(&r)); break;
			case OP_const4s: v = vf_const(br_sN(&r, 4)); break;
			case OP_const8u:
			case OP_const8s: v = vf_const((int64_t)br_u64(&r)); break;
			case OP_constu: v = vf_const((int64_t)br_uleb(&r)); break;
			case OP_consts: v = vf_const(br_sleb(&r)); break;
			case OP_bregx: {
				uint64_t reg = br_uleb(&r);
				int64_t k = br_sleb(&r);
				if (reg > UINT16_MAX)
					return vf_opaque();
				v = vf_add(vf_regval(e, (unsigned)reg), k);
				break;
			}
			case OP_dup:
			case OP_over:
			case OP_pick: {
				uint64_t i = op == OP_dup ? 0 : op == OP_over ? 1 : br_u8(&r);
				if (i >= n)
					return vf_opaque();
				v = st[n - 1 - i];
				break;
			}
			case OP_drop:
				if (!n)
					return vf_opaque();
				n--;
				continue;
			case OP_swap:
				if (n < 2)
					return vf_opaque();
				v = st[n - 1];
				st[n - 1] = st[n - 2];
				st[n - 2] = v;
				continue;
			case OP_rot:
				if (n < 3)
					return vf_opaque();
				v = st[n - 1];
				st[n - 1] = st[n - 2];
				st[n - 2] = st[n - 3];
				st[n - 3] = v;
				continue;
			case OP_deref:
			case OP_deref_size:
				if (!n)
					return vf_opaque();
				/* A partial-width load has no symbolic form. */
				if (op == OP_deref_size && br_u8(&r) != e->addr_size)
					st[n - 1] = vf_opaque();
				else
					st[n - 1] = vf_deref(st[n - 1]);
				continue;
			case OP_plus_uconst:
				if (!n)
					return vf_opaque();
				st[n - 1] = vf_add(st[n - 1], (int64_t)br_uleb(&r));
				continue;
			case OP_neg:
			case OP_not:
			case OP_abs:
				if (!n)
					return vf_opaque();
				if (!vf_is_const(&st[n - 1], &c))
					st[n - 1] = vf_opaque();
				else if (op == OP_neg)
					st[n - 1] = vf_const((int64_t)(0 - (uint64_t)c));
				else if (op == OP_not)
					st[n - 1] = vf_const(~c);
				else
					st[n - 1] = vf_const(c < 0 ? (int64_t)(0 - (uint64_t)c) : c);
				continue;
			case OP_and: case OP_div: case OP_minus: case OP_mod:
			case OP_mul: case OP_or: case OP_plus: case OP_shl:
			case OP_shr: case OP_shra: case OP_xor: case OP_eq:
			case OP_ge: case OP_gt: case OP_le: case OP_lt: case OP_ne:
				if (n < 2)
					return vf_opaque();
				st[n - 2] = arith(op, st[n - 2], st[n - 1]);
				n--;
				continue;
			case OP_skip:
			case OP_bra: {
				int64_t d = br_sN(&r, 2);
				if (op == OP_bra) {
					if (!n)
						return vf_opaque();
					if (!vf_is_const(&st[--n], &c))
						return vf_opaque();
					if (c == 0)
						continue;
				}
				int64_t to = (int64_t)r.pos + d;
				if (!br_ok(&r) || to < (int64_t)off || to > (int64_t)off + len)
					return vf_opaque();
				br_seek(&r, (size_t)to);
				continue;
			}
			case OP_nop:
				continue;
			default:
				/* Register locations, pieces, frame bases, calls,
				 * TLS, typed and vendor operations: no value of
				 * the kind a CFI rule needs. */
				return vf_opaque();
			}
		}
		if (!br_ok(&r) || n == VF_STACK)
			return vf_opaque();
		st[n++] = v;
	}
	if (!br_ok(&r) || n == 0)
		return vf_opaque();
	return st[n - 1];
}
