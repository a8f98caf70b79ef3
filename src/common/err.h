/* Error codes: one X-macro list gives the enum and the message table. */
#ifndef E2S_ERR_H
#define E2S_ERR_H

#include <stdint.h>

/* USAGE is a public function's caller passing what it must not; INTERNAL
 * is a broken invariant between our own modules (a bug in eh2sframe, never
 * the input's fault), kept apart so users do not hunt for a wrong argument. */
#define E2S_ERRORS(X)                                                   \
	X(OK, "success")                                                \
	X(NOMEM, "out of memory")                                       \
	X(IO, "input/output error")                                     \
	X(TRUNCATED, "truncated data")                                  \
	X(LEB_OVERLONG, "overlong or oversized LEB128 value")           \
	X(NOT_ELF, "not an ELF file")                                   \
	X(BAD_ELF, "malformed ELF file")                                \
	X(UNSUPPORTED_MACHINE, "unsupported machine")                   \
	X(NO_CFI, "no .eh_frame or .debug_frame")                       \
	X(BAD_LENGTH, "record length runs past the section end")        \
	X(BAD_CIE_ID, "FDE points at something that is not a CIE")      \
	X(BAD_CIE_VERSION, "unsupported CIE version")                   \
	X(BAD_AUGMENTATION, "unknown CIE augmentation")                 \
	X(BAD_POINTER_ENCODING, "invalid DW_EH_PE pointer encoding")    \
	X(BAD_ADDRESS_SIZE, "unsupported address or segment size")      \
	X(BAD_OPCODE, "unknown DW_CFA opcode")                          \
	X(BAD_REGISTER, "register number out of range")                 \
	X(PC_BACKWARDS, "CFI advance moves the PC backwards or past the FDE end") \
	X(STACK_UNDERFLOW, "DW_CFA_restore_state with an empty stack")  \
	X(STACK_OVERFLOW, "DW_CFA_remember_state nested too deeply")    \
	X(CFA_NOT_REG, "DW_CFA_def_cfa_offset/register on a non-register CFA") \
	X(BAD_RELOC, "malformed or unsupported relocation")             \
	X(BAD_SFRAME, "malformed .sframe section")                      \
	X(SFRAME_VERSION, "unsupported SFrame version")                 \
	X(TOO_LARGE, "value too large for the SFrame encoding")         \
	X(EXISTS, "file already has an .sframe section")                \
	X(NO_FUNCS, "no function could be converted to SFrame")         \
	X(USAGE, "invalid argument")                                   \
	X(SFRAME_NAME, "another kind of section is named .sframe")      \
	X(OUTPUT_CHECK, "the output failed its check, nothing written") \
	X(CIE_PTR_WIDTH, "8-byte CIE pointer in a 32-bit DWARF record "  \
	  "(Free Pascal's .debug_frame): later fields misread")          \
	X(INTERNAL, "internal error")

typedef enum {
#define E2S_X(name, msg) E2S_ERR_##name,
	E2S_ERRORS(E2S_X)
#undef E2S_X
	E2S_ERR_COUNT_
} e2s_err;

const char *e2s_strerror(e2s_err e);

/* Where a problem is: the library fills this, the CLI prints
 * "eh2sframe: FILE: SECTION+0xOFF: message[: detail]". */
typedef struct {
	e2s_err code;
	const char *section; /* static string or NULL */
	uint64_t offset;     /* offset inside section (valid if section) */
	char detail[160];    /* optional free text, "" if none */
} e2s_diag;

/* Record an error in *d (if d is non-NULL) and return code. */
e2s_err e2s_fail(e2s_diag *d, e2s_err code, const char *section,
		 uint64_t offset, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* Format a diag as "SECTION+0xOFF: message: detail" into buf. */
void e2s_diag_format(const e2s_diag *d, char *buf, size_t len);

#endif
