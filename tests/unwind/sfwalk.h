/* sfwalk: a small in-process SFrame V3 stack walker for tests.
 * It is a second, independent reading of the format (it shares no code
 * with src/sframe/sfr_*.c, not even sframe_fmt.h), so a misreading
 * in one of them shows up as a disagreement between the two.
 *
 * Use: sfw_init() once, outside signal handlers (it calls
 * dl_iterate_phdr and records every loaded object's PT_GNU_SFRAME);
 * then sfw_regs_from_ucontext() + sfw_walk() are async-signal-safe (no
 * locks, no allocation) and read memory only inside the recorded
 * .sframe segments and the given stack bounds. */
#ifndef SFWALK_H
#define SFWALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SFW_MAX_OBJS 64
#define SFW_NREGS 32 /* DWARF register numbers 0..31 (frame 0 only) */

/* Why a walk ended. The first group is an ordinary end or a gap in the
 * coverage; the second means the section or the rules are malformed. */
#define SFW_STOP_LIST(X)                                                \
	X(MAX_FRAMES, "frame buffer full")                              \
	X(OUTERMOST, "FRE says RA undefined (outermost frame)")         \
	X(RA_ZERO, "recovered return address is 0")                     \
	X(NO_OBJECT, "pc outside every loaded object")                  \
	X(NO_SFRAME, "object has no .sframe")                           \
	X(NO_FDE, "no FDE covers pc")                                   \
	X(NO_FRE, "FDE has no FRE for pc")                              \
	X(REG_UNKNOWN, "rule needs a register unknown past frame 0")    \
	X(RA_IN_REG, "RA left in its register past frame 0")            \
	X(STACK_BOUNDS, "stack read outside the thread's stack")        \
	X(BAD_SECTION, "malformed .sframe (bounds/header)")             \
	X(BAD_FRE, "FRE layout the spec does not define")

enum {
#define SFW_ENUM(n, s) SFW_STOP_##n,
	SFW_STOP_LIST(SFW_ENUM)
#undef SFW_ENUM
	SFW_STOP_COUNT
};
#define SFW_STOP_FIRST_BAD SFW_STOP_BAD_SECTION

const char *sfw_stop_name(int reason);
const char *sfw_stop_text(int reason);

typedef struct {
	uintptr_t lo, hi;         /* an executable PT_LOAD, absolute */
} sfw_range;

typedef struct {
	sfw_range text[4];
	int ntext;
	const uint8_t *sec;       /* .sframe bytes in memory, NULL if none */
	size_t size;
	bool bad;                 /* header did not validate */
	bool sorted;              /* FDE starts increase: binary search ok */
	uint8_t flags;
	int8_t fixed_fp, fixed_ra;
	uint32_t nfdes;
	size_t fde_at, fre_at, fre_len; /* section offsets / length */
	char name[96];
} sfw_obj;

typedef struct {
	sfw_obj obj[SFW_MAX_OBJS];
	int nobj;
	int nsframe;              /* objects with a valid .sframe */
	int nbad;                 /* objects whose .sframe did not validate */
	int nunsorted;            /* SORTED flag set but starts not increasing */
} sfw_ctx;

typedef struct {
	uint64_t reg[SFW_NREGS];  /* frame 0 registers by DWARF number */
	uint64_t pc;
} sfw_regs;

typedef struct {
	uintptr_t pc, sp, fp;
	uintptr_t cfa;            /* CFA of this frame (set once unwound) */
	uint8_t fde_type;         /* 0 default, 1 flex; 0xff: none */
	bool mangled;
	bool exact_pc;            /* pc is not a return address: the frame
	                           * below is a signal frame (or frame 0) */
	bool signal;              /* this frame's FDE is a signal frame */
} sfw_frame;

typedef struct {
	unsigned long fde_default, fde_flex, fre_mask, mangled_ra;
} sfw_stats;

/* Record the loaded objects. Returns the number of objects seen. */
int sfw_init(sfw_ctx *c);

/* Frame-0 registers from a signal handler's ucontext_t. */
void sfw_regs_from_ucontext(const void *uc, sfw_regs *r);

/* Walk from r; stack reads only inside [stack_lo, stack_hi). Fills up to
 * max frames (frame 0 is r's pc) and returns how many; *reason gets the
 * SFW_STOP_* code of why the walk ended. stats may be NULL. */
int sfw_walk(const sfw_ctx *c, const sfw_regs *r, uintptr_t stack_lo,
	     uintptr_t stack_hi, sfw_frame *out, int max, int *reason,
	     sfw_stats *stats);

#ifdef __cplusplus
}
#endif
#endif
