/* Wraps glibc's own per-architecture <uw-sigframe.h> (found next on the
 * include path): its outermost-frame test stays glibc's, and the harness
 * counts when it ends a walk, since __stacktrace_sframe returns 0 both
 * for "stack ends here" and for "fall back to DWARF". */
#include_next <uw-sigframe.h>

#ifdef MD_DETECT_OUTERMOST_FRAME
extern int shim_outermost_hits;

static inline _Unwind_Reason_Code shim_detect_outermost(frame *f)
{
	_Unwind_Reason_Code r = MD_DETECT_OUTERMOST_FRAME(f);
	if (r == _URC_END_OF_STACK)
		shim_outermost_hits++;
	return r;
}
#undef MD_DETECT_OUTERMOST_FRAME
#define MD_DETECT_OUTERMOST_FRAME shim_detect_outermost
#endif
