/* .sframe decoder for untrusted input, and Appendix A rule recovery.
 * Every offset is validated against the block end before use; each FRE
 * is read through a bounds-checked reader limited to its function's FRE
 * sub-section slice. */
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "../common/reader.h"
#include "../common/mem.h"
#include "sfr.h"
#include "sfr_spec.h"

#define SEC ".sframe"

unsigned sfr_block_abi(const sfr_block *b)
{
	return b->abi >= SFR_ABI_AARCH64_BE && b->abi <= SFR_ABI_S390X_BE
		       ? b->abi : 0;
}

sfr_sec_kind sfr_section_kind(uint32_t type, const char *name,
			      const uint8_t *data, size_t size)
{
	bool named = name && strcmp(name, ".sframe") == 0;
	if (type == SFR_SHT_GNU_SFRAME)
		return SFR_SEC_SFRAME;
	if (!named)
		return SFR_SEC_NONE;
	if (type == SHT_NOBITS)
		return SFR_SEC_PLACEHOLDER;
	/* Version 1 (binutils 2.40) is not decoded, but it is SFrame: a
	 * rebuild replaces it and a dump says which version it is. Either
	 * byte order of the magic, as the decoder accepts. */
	if (type == SHT_PROGBITS && data && size >= SFR_HEADER_LEN &&
	    ((data[0] == SFR_MAGIC_HI && data[1] == SFR_MAGIC_LO) ||
	     (data[0] == SFR_MAGIC_LO && data[1] == SFR_MAGIC_HI)) &&
	    data[2] >= 1 && data[2] <= SFR_VERSION_3)
		return SFR_SEC_SFRAME;
	return SFR_SEC_FOREIGN;
}

bool sfr_abi_regs(unsigned abi, uint16_t *sp, uint16_t *fp)
{
	switch (abi) {
	case SFR_ABI_AMD64_LE: *sp = 7; *fp = 6; return true;
	case SFR_ABI_AARCH64_BE:
	case SFR_ABI_AARCH64_LE: *sp = 31; *fp = 29; return true;
	case SFR_ABI_S390X_BE: *sp = 15; *fp = 11; return true;
	default: return false;
	}
}

int64_t sfr_dw(const sfr_fre *f, unsigned i)
{
	uint32_t v = i < f->ndw && i < SFR_MAX_DW ? f->raw[i] : 0;
	switch (f->dwbytes) {
	case 1: return (int8_t)v;
	case 2: return (int16_t)v;
	default: return (int32_t)v;
	}
}

/* Data word counts the spec defines, per ABI and FDE type. */
static bool count_ok(unsigned abi, unsigned fde_type, const sfr_fre *f)
{
	unsigned n = f->ndw;
	if (n == 0)
		return true; /* RA undefined */
	if (fde_type == SFR_FDETYPE_FLEX) {
		/* CFA pair; RA pair or padding 0; FP pair (spec 3.2). */
		if (n == 2)
			return true;
		if (n == 4)
			return f->raw[2] != 0;
		if (n == 5)
			return f->raw[2] == 0 && f->raw[3] != 0;
		if (n == 6)
			return f->raw[2] != 0 && f->raw[4] != 0;
		return false;
	}
	switch (abi) {
	case SFR_ABI_AMD64_LE: return n <= 2;
	case SFR_ABI_AARCH64_BE:
	case SFR_ABI_AARCH64_LE: return n <= 3;
	case SFR_ABI_S390X_BE: return n <= 3;
	default: return false;
	}
}

typedef struct {
	sfr_section *s;
	e2s_vec vb, vf, vr;
	const sfr_relfield *rf; /* ET_REL start fields, or NULL */
	size_t nrf;
	e2s_diag *diag;
	/* Per block: FRE runs already decoded, so FDEs sharing one stored
	 * copy (sfe share_fres) share the decoded FREs too, and the count
	 * of decoded FREs stays bounded by the bytes. */
	struct seen {
		uint32_t fre_off, nfres, first;
		uint8_t info, info2, rep, used;
	} *seen;
	size_t seen_cap;
	uint64_t decoded; /* FREs decoded in this block */
} dctx;

static e2s_err bad(dctx *c, uint64_t off, const char *what)
{
	return e2s_fail(c->diag, E2S_ERR_BAD_SFRAME, SEC, off, "%s", what);
}

/* One function's FREs inside [lo, hi) of the section; V3 has the
 * attribute in front of them, V2 took it from the FDE already. */
static e2s_err decode_fres(dctx *c, const uint8_t *data, const sfr_block *b,
			   sfr_fde *fd, uint64_t lo, uint64_t hi);

/* The FREs of fd: reuse an identical earlier run at the same offset, or
 * decode them. Either way they must lie inside this function. */
static e2s_err read_fres(dctx *c, const uint8_t *data, const sfr_block *b,
			 sfr_fde *fd, uint64_t lo, uint64_t hi)
{
	bool v2 = b->version == SFR_VERSION_2;
	size_t i = 0;
	e2s_err e;
	if (c->seen_cap) {
		i = (fd->fre_off * 0x9e3779b1u) & (c->seen_cap - 1);
		while (c->seen[i].used) {
			const struct seen *sn = &c->seen[i];
			if (sn->fre_off == fd->fre_off &&
			    (!v2 || (sn->nfres == fd->nfres && sn->info == fd->info &&
				     sn->rep == fd->rep_size)))
				break;
			i = (i + 1) & (c->seen_cap - 1);
		}
	}
	if (c->seen_cap && c->seen[i].used) {
		const struct seen *sn = &c->seen[i];
		fd->nfres = sn->nfres;
		fd->info = sn->info;
		fd->info2 = sn->info2;
		fd->rep_size = sn->rep;
		fd->fre_type = sfr_info_fretype(fd->info);
		fd->pc_type = sfr_info_pctype(fd->info);
		fd->fde_type = sfr_info2_fdetype(fd->info2);
		fd->signal = !v2 && sfr_info_signal_p(fd->info);
		fd->pauth_b = sfr_info_pauth_b_p(fd->info);
		fd->fre_first = sn->first;
	} else {
		e = decode_fres(c, data, b, fd, lo, hi);
		if (e)
			return e;
		if (c->seen_cap)
			c->seen[i] = (struct seen){fd->fre_off, fd->nfres, fd->fre_first,
						   fd->info, fd->info2, fd->rep_size, 1};
	}
	/* Starts increase, so the last one bounds them all. */
	uint64_t limit = fd->pc_type == SFR_PCTYPE_MASK ? fd->rep_size : fd->size;
	if (fd->nfres) {
		const sfr_fre *last = &c->s->fres[fd->fre_first + fd->nfres - 1];
		if (last->start >= limit && !(limit == 0 && last->start == 0))
			return bad(c, last->sec_off, "FRE start outside the function");
		/* MASK rows repeat per block, but a start past the function's
		 * end is never reached; libsframe rejects it too. */
		if (fd->pc_type == SFR_PCTYPE_MASK && last->start > fd->size)
			return bad(c, last->sec_off,
				   "MASK FRE start past the function end");
	}
	return E2S_ERR_OK;
}

static e2s_err decode_fres(dctx *c, const uint8_t *data, const sfr_block *b,
			   sfr_fde *fd, uint64_t lo, uint64_t hi)
{
	br_t r;
	uint64_t at = lo + fd->fre_off;
	bool v2 = b->version == SFR_VERSION_2;
	if (fd->fre_off > hi - lo || (!v2 && hi - at < SFR_FDE_ATTR_LEN))
		return bad(c, fd->field_off, "FDE's FRE offset out of bounds");
	br_init(&r, data, (size_t)hi, b->big_endian);
	br_seek(&r, (size_t)at);
	if (!v2) {
		fd->nfres = br_u16(&r);
		fd->info = br_u8(&r);
		fd->info2 = br_u8(&r);
		fd->rep_size = br_u8(&r);
		fd->signal = sfr_info_signal_p(fd->info);
	}
	fd->fre_type = sfr_info_fretype(fd->info);
	fd->pc_type = sfr_info_pctype(fd->info);
	fd->fde_type = sfr_info2_fdetype(fd->info2);
	fd->pauth_b = sfr_info_pauth_b_p(fd->info);
	if (fd->fre_type > SFR_FRETYPE_ADDR4)
		return bad(c, v2 ? fd->field_off + 16 : at + 2, "unknown FRE type");
	if (fd->fde_type > SFR_FDETYPE_FLEX)
		return bad(c, at + 3, "unknown FDE type");
	if (fd->pc_type == SFR_PCTYPE_MASK && fd->rep_size == 0)
		return bad(c, v2 ? fd->field_off + 17 : at + 4,
			   "MASK FDE with repetition size 0");
	/* Each FRE takes at least 2 bytes, and each stored FRE is decoded
	 * once: bounds the work for hostile counts and overlapping runs. */
	if ((uint64_t)fd->nfres * 2 > hi - r.pos)
		return bad(c, fd->field_off, "FDE's FRE count runs past the FRE sub-section");
	c->decoded += fd->nfres;
	if (c->decoded * 2 > hi - lo)
		return bad(c, fd->field_off, "FDEs' FRE data overlaps");
	unsigned ab = fd->fre_type == SFR_FRETYPE_ADDR1 ? 1
		      : fd->fre_type == SFR_FRETYPE_ADDR2 ? 2 : 4;
	fd->fre_first = (uint32_t)c->vr.n;
	for (uint32_t i = 0; i < fd->nfres; i++) {
		sfr_fre f;
		memset(&f, 0, sizeof f);
		f.sec_off = r.pos;
		f.start = (uint32_t)br_uN(&r, ab);
		f.info = br_u8(&r);
		if (!br_ok(&r))
			return bad(c, f.sec_off, "FRE runs past the FRE sub-section");
		f.ndw = sfr_fre_dwcount(f.info);
		unsigned code = sfr_fre_dwsize(f.info);
		if (code > SFR_DW_4B)
			return bad(c, f.sec_off, "invalid data word size");
		f.dwbytes = (uint8_t)(1u << code);
		if (f.ndw > SFR_MAX_DW)
			return bad(c, f.sec_off, "too many data words");
		for (unsigned k = 0; k < f.ndw; k++)
			f.raw[k] = (uint32_t)br_uN(&r, f.dwbytes);
		if (!br_ok(&r))
			return bad(c, f.sec_off, "FRE data runs past the FRE sub-section");
		if (!count_ok(b->abi, fd->fde_type, &f))
			return bad(c, f.sec_off, "data word count invalid for ABI/FDE type");
		if (i > 0 && f.start <= c->s->fres[c->vr.n - 1].start)
			return bad(c, f.sec_off, "FRE starts not increasing");
		if (!e2s_vec_grow((void **)&c->s->fres, &c->vr, sizeof f, 64))
			return e2s_fail(c->diag, E2S_ERR_NOMEM, SEC, 0, NULL);
		c->s->fres[c->vr.n++] = f;
	}
	return E2S_ERR_OK;
}

static const sfr_relfield *find_field(const dctx *c, uint64_t off)
{
	size_t lo = 0, hi = c->nrf;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->rf[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < c->nrf && c->rf[lo].off == off ? &c->rf[lo] : NULL;
}

/* One block starting at off; *end gets its end. */
static e2s_err read_block(dctx *c, const uint8_t *data, size_t size,
			  uint64_t off, uint64_t *end)
{
	sfr_block b;
	br_t r;
	memset(&b, 0, sizeof b);
	b.off = off;
	if (size - off < SFR_HEADER_LEN)
		return bad(c, off, "truncated SFrame header");
	/* Byte order from the magic (spec 2.1.1). */
	if (data[off] == SFR_MAGIC_HI && data[off + 1] == SFR_MAGIC_LO)
		b.big_endian = true;
	else if (data[off] == SFR_MAGIC_LO && data[off + 1] == SFR_MAGIC_HI)
		b.big_endian = false;
	else
		return bad(c, off, "bad SFrame magic");
	br_init(&r, data, size, b.big_endian);
	br_seek(&r, (size_t)off + 2);
	b.version = br_u8(&r);
	b.flags = br_u8(&r);
	b.abi = br_u8(&r);
	b.fixed_fp = (int8_t)br_u8(&r);
	b.fixed_ra = (int8_t)br_u8(&r);
	b.auxhdr_len = br_u8(&r);
	b.nfdes = br_u32(&r);
	b.nfres = br_u32(&r);
	b.fre_len = br_u32(&r);
	b.fdeoff = br_u32(&r);
	b.freoff = br_u32(&r);
	/* The V2 header is laid out like V3's (spec 1.2 lists no header
	 * change); its FDEs are 20-byte entries holding the attributes. */
	bool v2 = b.version == SFR_VERSION_2;
	if (b.version != SFR_VERSION_3 && !v2)
		return e2s_fail(c->diag, E2S_ERR_SFRAME_VERSION, SEC, off + 2,
				"version %u", b.version);
	if (b.flags & ~(SFR_FLAG_FDE_SORTED | SFR_FLAG_START_PCREL |
			(v2 ? SFR_FLAG_FRAME_POINTER : 0)))
		return bad(c, off + 3, "unknown flags");
	if (!sfr_block_abi(&b))
		return bad(c, off + 4, "unknown ABI/arch");
	if ((b.abi == SFR_ABI_AARCH64_BE || b.abi == SFR_ABI_S390X_BE) !=
	    b.big_endian)
		return bad(c, off + 4, "ABI/arch does not match byte order");
	uint64_t esz = v2 ? SFR_V2_FDE_LEN : SFR_FDE_INDEX_LEN;
	uint64_t hdr = SFR_HEADER_LEN + (uint64_t)b.auxhdr_len;
	uint64_t avail = size - off;
	if (hdr > avail)
		return bad(c, off + 7, "auxiliary header past the end");
	uint64_t body = avail - hdr;
	/* The two sub-sections tile the body: FDEs, then FREs. */
	if ((uint64_t)b.nfdes * esz > body || b.fdeoff > body - (uint64_t)b.nfdes * esz)
		return bad(c, off + 8, "FDE sub-section past the end");
	if (b.freoff < b.fdeoff + (uint64_t)b.nfdes * esz)
		return bad(c, off + 24, "FRE sub-section overlaps the FDEs");
	if (b.freoff > body || b.fre_len > body - b.freoff)
		return bad(c, off + 16, "FRE sub-section past the end");
	b.size = hdr + b.freoff + b.fre_len;
	*end = off + b.size;
	/* No bound of sfh_num_fres by sfh_fre_len: with shared FRE data the
	 * referenced FREs may take more bytes than are stored. */
	free(c->seen);
	c->seen = NULL;
	c->decoded = 0;
	for (c->seen_cap = 16; c->seen_cap < 2 * (uint64_t)b.nfdes;)
		c->seen_cap *= 2;
	c->seen = calloc(c->seen_cap, sizeof *c->seen);
	if (!c->seen) {
		c->seen_cap = 0;
		return e2s_fail(c->diag, E2S_ERR_NOMEM, SEC, 0, NULL);
	}

	uint32_t bi = (uint32_t)c->vb.n;
	if (!e2s_vec_grow((void **)&c->s->blocks, &c->vb, sizeof b, 64))
		return e2s_fail(c->diag, E2S_ERR_NOMEM, SEC, 0, NULL);
	b.fde_first = (uint32_t)c->vf.n;
	c->s->blocks[c->vb.n++] = b;

	uint64_t fdes = off + hdr + b.fdeoff;
	uint64_t fre_lo = off + hdr + b.freoff, fre_hi = fre_lo + b.fre_len;
	uint64_t total_fres = 0;
	br_seek(&r, (size_t)fdes);
	for (uint32_t i = 0; i < b.nfdes; i++) {
		sfr_fde fd;
		memset(&fd, 0, sizeof fd);
		fd.block = bi;
		fd.field_off = r.pos;
		if (v2) {
			fd.start_field = (int32_t)br_u32(&r);
			fd.size = br_u32(&r);
			fd.fre_off = br_u32(&r);
			fd.nfres = br_u32(&r);
			fd.info = br_u8(&r);
			fd.rep_size = br_u8(&r);
			(void)br_u16(&r); /* padding */
		} else {
			fd.start_field = (int64_t)br_u64(&r);
			fd.size = br_u32(&r);
			fd.fre_off = br_u32(&r);
		}
		if (!br_ok(&r))
			return bad(c, fd.field_off, "truncated FDE");
		const sfr_relfield *rf = c->rf ? find_field(c, fd.field_off) : NULL;
		if (rf) {
			fd.pc = rf->value;
			fd.shndx = rf->shndx;
		} else {
			uint64_t base = b.flags & SFR_FLAG_START_PCREL
						? c->s->vaddr + fd.field_off
						: c->s->vaddr + off;
			fd.pc = base + (uint64_t)fd.start_field;
		}
		size_t save = r.pos;
		e2s_err e = read_fres(c, data, &b, &fd, fre_lo, fre_hi);
		if (e)
			return e;
		total_fres += fd.nfres;
		if (total_fres > b.nfres)
			return bad(c, off + 12, "FRE count does not match the FDEs");
		r.pos = save;
		if (b.flags & SFR_FLAG_FDE_SORTED && i > 0) {
			const sfr_fde *p = &c->s->fdes[c->vf.n - 1];
			if (fd.shndx < p->shndx || (fd.shndx == p->shndx && fd.pc < p->pc))
				return bad(c, fd.field_off, "FDEs flagged sorted are not");
		}
		if (!e2s_vec_grow((void **)&c->s->fdes, &c->vf, sizeof fd, 64))
			return e2s_fail(c->diag, E2S_ERR_NOMEM, SEC, 0, NULL);
		c->s->fdes[c->vf.n++] = fd;
	}
	/* With shared FRE data (sfe --share-fres) the header counts the
	 * FREs every FDE refers to, so the sum still has to match. */
	if (total_fres != b.nfres)
		return bad(c, off + 12, "FRE count does not match the FDEs");
	return E2S_ERR_OK;
}

static int pc_cmp(const void *a, const void *b, void *arg)
{
	const sfr_fde *f = arg;
	const sfr_fde *x = &f[*(const uint32_t *)a], *y = &f[*(const uint32_t *)b];
	if (x->shndx != y->shndx)
		return x->shndx < y->shndx ? -1 : 1;
	if (x->pc != y->pc)
		return x->pc < y->pc ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static e2s_err decode(const uint8_t *data, size_t size, uint64_t vaddr,
		      const sfr_relfield *rf, size_t nrf, sfr_section *out,
		      e2s_diag *diag)
{
	dctx c;
	e2s_err e = E2S_ERR_OK;
	uint64_t off = 0;
	memset(out, 0, sizeof *out);
	memset(&c, 0, sizeof c);
	c.s = out;
	c.diag = diag;
	c.rf = rf;
	c.nrf = nrf;
	out->vaddr = vaddr;
	out->relocatable = rf != NULL;
	if (size == 0)
		return bad(&c, 0, "empty section");
	while (off < size) {
		uint64_t end = 0;
		e = read_block(&c, data, size, off, &end);
		if (e)
			goto fail;
		off = end;
		out->nblocks = c.vb.n;
		out->nfdes = c.vf.n;
		out->nfres = c.vr.n;
		/* Zero padding: to the next 8-byte boundary between blocks
		 * (linker concatenation), or a zero tail (PT_GNU_SFRAME may
		 * be larger than the section). */
		while (off < size && off % 8 && data[off] == 0)
			off++;
		size_t z = (size_t)off;
		while (z < size && data[z] == 0)
			z++;
		if (z == size)
			break;
	}
	out->by_pc = malloc((out->nfdes ? out->nfdes : 1) * sizeof *out->by_pc);
	if (!out->by_pc) {
		e = e2s_fail(diag, E2S_ERR_NOMEM, SEC, 0, NULL);
		goto fail;
	}
	for (size_t i = 0; i < out->nfdes; i++)
		out->by_pc[i] = (uint32_t)i;
	qsort_r(out->by_pc, out->nfdes, sizeof *out->by_pc, pc_cmp, out->fdes);
	free(c.seen);
	return E2S_ERR_OK;
fail:
	free(c.seen);
	out->nblocks = c.vb.n;
	out->nfdes = c.vf.n;
	out->nfres = c.vr.n;
	sfr_free(out);
	return e;
}

e2s_err sfr_decode(const uint8_t *data, size_t size, uint64_t vaddr,
		   sfr_section *out, e2s_diag *diag)
{
	return decode(data, size, vaddr, NULL, 0, out, diag);
}

e2s_err sfr_decode_rel(const uint8_t *data, size_t size,
		       const sfr_relfield *rf, size_t nrf, sfr_section *out,
		       e2s_diag *diag)
{
	static const sfr_relfield none;
	return decode(data, size, 0, rf ? rf : &none, rf ? nrf : 0, out, diag);
}

void sfr_free(sfr_section *s)
{
	free(s->blocks);
	free(s->fdes);
	free(s->fres);
	free(s->by_pc);
	memset(s, 0, sizeof *s);
}

bool sfr_find_fre(const sfr_section *s, uint64_t pc, size_t *fde_idx,
		  size_t *fre_idx)
{
	return sfr_find_fre_sec(s, 0, pc, fde_idx, fre_idx);
}

bool sfr_find_fre_sec(const sfr_section *s, uint32_t shndx, uint64_t pc,
		      size_t *fde_idx, size_t *fre_idx)
{
	size_t lo = 0, hi = s->nfdes;
	/* last FDE with (shndx, start) <= (shndx, pc) */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const sfr_fde *m = &s->fdes[s->by_pc[mid]];
		if (m->shndx < shndx || (m->shndx == shndx && m->pc <= pc))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return false;
	const sfr_fde *fd = &s->fdes[s->by_pc[lo - 1]];
	if (fd->shndx != shndx || pc - fd->pc >= fd->size)
		return false;
	uint64_t rel = pc - fd->pc;
	if (fd->pc_type == SFR_PCTYPE_MASK)
		rel %= fd->rep_size;
	/* last FRE with start <= rel */
	size_t found = SIZE_MAX;
	size_t a = 0, b = fd->nfres;
	while (a < b) {
		size_t mid = a + (b - a) / 2;
		if (s->fres[fd->fre_first + mid].start <= rel) {
			found = mid;
			a = mid + 1;
		} else {
			b = mid;
		}
	}
	if (found == SIZE_MAX)
		return false;
	*fde_idx = (size_t)(fd - s->fdes);
	*fre_idx = fd->fre_first + found;
	return true;
}

/* sframe_apply_rule of Appendix A, kept symbolic. */
static void flex_loc(uint32_t ctrl, int64_t off, sfr_loc *l)
{
	memset(l, 0, sizeof *l);
	l->kind = SFR_LOC_RULE;
	l->base_cfa = !sfr_ctl_reg_p(ctrl);
	l->reg = l->base_cfa ? 0 : (uint16_t)sfr_ctl_regnum(ctrl);
	l->deref = sfr_ctl_deref_p(ctrl);
	l->off = off;
}

static void stack_loc(int64_t off, bool fixed, sfr_loc *l)
{
	memset(l, 0, sizeof *l);
	l->kind = SFR_LOC_RULE;
	l->base_cfa = true;
	l->deref = true;
	l->fixed = fixed;
	l->off = off;
}

/* A default-FDE RA/FP word: a stack slot, or (V2 s390x, odd) the
 * register it was copied to. */
static void s390_loc(bool v2_s390, int64_t w, sfr_loc *l)
{
	if (v2_s390 && sfr_v2_s390x_reg_p(w)) {
		memset(l, 0, sizeof *l);
		l->kind = SFR_LOC_RULE;
		l->reg = (uint16_t)sfr_v2_s390x_regnum(w);
		return;
	}
	stack_loc(w, false, l);
}

e2s_err sfr_recover(const sfr_section *s, const sfr_fde *fde,
		    const sfr_fre *fre, sfr_rules *out, e2s_diag *diag)
{
	const sfr_block *b = &s->blocks[fde->block];
	uint16_t sp, fp;
	bool s390 = b->abi == SFR_ABI_S390X_BE;
	bool amd64 = b->abi == SFR_ABI_AMD64_LE;
	memset(out, 0, sizeof *out);
	if (!sfr_abi_regs(b->abi, &sp, &fp))
		return e2s_fail(diag, E2S_ERR_BAD_SFRAME, SEC, fre->sec_off,
				"unknown ABI/arch");
	out->sp_off = s390 ? SFR_S390X_SP_FROM_CFA : 0;
	out->flex = fde->fde_type == SFR_FDETYPE_FLEX;
	if (fre->ndw == 0) {
		out->outermost = true;
		return E2S_ERR_OK;
	}
	out->mangled = sfr_fre_mangled_p(fre->info);
	int64_t cfa_w = out->flex ? sfr_dw(fre, 1) : sfr_dw(fre, 0);
	if (s390) /* also for flex FDEs: interop with libsframe 2.47 */
		cfa_w = sfr_s390x_cfa_off(cfa_w);
	out->cfa_off = cfa_w;

	if (out->flex) {
		uint32_t c0 = fre->raw[0];
		if (!sfr_ctl_reg_p(c0))
			return e2s_fail(diag, E2S_ERR_BAD_SFRAME, SEC, fre->sec_off,
					"flexible CFA rule without a base register");
		out->cfa_reg = (uint16_t)sfr_ctl_regnum(c0);
		out->cfa_deref = sfr_ctl_deref_p(c0);
		unsigned fpi = 0;
		if (fre->ndw >= 3 && fre->raw[2] != 0) {
			flex_loc(fre->raw[2], sfr_dw(fre, 3), &out->ra);
			fpi = 4;
		} else {
			fpi = 3; /* padding word 2 (or nothing) */
			if (amd64)
				stack_loc(b->fixed_ra, true, &out->ra);
		}
		if (fre->ndw > fpi)
			flex_loc(fre->raw[fpi], sfr_dw(fre, fpi + 1), &out->fp);
		return E2S_ERR_OK;
	}

	out->cfa_reg = sfr_fre_cfa_fp_p(fre->info) ? fp : sp;
	if (amd64) {
		/* RA at the header's fixed offset; word 2 is FP. */
		stack_loc(b->fixed_ra, true, &out->ra);
		if (fre->ndw >= 2)
			stack_loc(sfr_dw(fre, 1), false, &out->fp);
	} else {
		bool v2 = b->version == SFR_VERSION_2;
		if (fre->ndw >= 2 &&
		    !(s390 && sfr_dw(fre, 1) == SFR_RA_OFFSET_INVALID))
			s390_loc(s390 && v2, sfr_dw(fre, 1), &out->ra);
		if (fre->ndw >= 3)
			s390_loc(s390 && v2, sfr_dw(fre, 2), &out->fp);
	}
	return E2S_ERR_OK;
}
