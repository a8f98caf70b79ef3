/* eh2sframe — add an SFrame stack-trace section, built from the DWARF
 * call-frame information (.eh_frame / .debug_frame), to 64-bit ELF files
 * (x86-64, AArch64, s390x).
 *
 * Usage:
 *
 *     eh2s_file *f;
 *     eh2s_error err;
 *     eh2s_convert_opts o;
 *     if (eh2s_open("prog", &f, &err) != EH2S_OK) { puts(err.message); ... }
 *     eh2s_convert_opts_init(&o);
 *     if (eh2s_convert(f, &o, &err) == EH2S_OK)
 *             eh2s_write(f, "prog.sframe", &err);
 *     eh2s_close(f);
 *
 * Conventions:
 * - Every fallible function returns an eh2s_status (EH2S_OK == 0) and,
 *   when its last argument `err` is not NULL, fills it with the same code
 *   and a one-line message (for example ".eh_frame+0x40: unknown DW_CFA
 *   opcode: 0x2f"). The library never prints and never exits.
 * - A handle (eh2s_file) is opaque and owns everything it returns;
 *   pointers stay valid until the next call that changes the handle
 *   (eh2s_convert) or eh2s_close.
 * - No global state: different handles may be used from different threads
 *   at the same time; one handle must not be used by two threads at once.
 * - Link with `pkg-config --cflags --libs eh2sframe`.
 */
#ifndef EH2SFRAME_H
#define EH2SFRAME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define EH2S_VERSION_MAJOR 0
#define EH2S_VERSION_MINOR 1
#define EH2S_VERSION_PATCH 0

/* "0.1.0": the version of the library actually linked. */
const char *eh2s_version(void);

/* ---- Errors ---------------------------------------------------------- */

typedef enum {
	EH2S_OK = 0,
	EH2S_E_NOMEM,        /* out of memory */
	EH2S_E_IO,           /* reading or writing a file failed */
	EH2S_E_NOT_ELF,      /* input is not an ELF file */
	EH2S_E_BAD_ELF,      /* malformed or truncated ELF file */
	EH2S_E_UNSUPPORTED,  /* machine, ELF class or option not supported */
	EH2S_E_NO_CFI,       /* no .eh_frame or .debug_frame */
	EH2S_E_BAD_CFI,      /* CFI section unreadable as a whole */
	EH2S_E_BAD_SFRAME,   /* an existing .sframe is malformed */
	EH2S_E_EXISTS,       /* already has .sframe (see opts.force) */
	EH2S_E_NO_FUNCS,     /* no function could be converted */
	EH2S_E_VERIFY,       /* eh2s_verify found mismatching functions */
	EH2S_E_USAGE,        /* invalid argument or call order */
	EH2S_E_INTERNAL,     /* a bug in eh2sframe */
} eh2s_status;

typedef struct {
	eh2s_status code;
	char message[320];   /* "" for EH2S_OK */
} eh2s_error;

/* Short fixed text for a status ("not an ELF file"). */
const char *eh2s_strerror(eh2s_status code);

/* ---- Opening --------------------------------------------------------- */

typedef struct eh2s_file eh2s_file;

/* Read path whole into memory. Fails with NOT_ELF, BAD_ELF (truncated
 * too), UNSUPPORTED (32-bit or another machine), IO. The file may change
 * or disappear afterwards: the handle works on its own copy. */
eh2s_status eh2s_open(const char *path, eh2s_file **out, eh2s_error *err);
/* The same from a buffer (copied; the caller keeps ownership). */
eh2s_status eh2s_open_mem(const void *data, size_t size, eh2s_file **out,
			  eh2s_error *err);
void eh2s_close(eh2s_file *f);

/* e_machine (EM_X86_64 62, EM_AARCH64 183, EM_S390 22). */
unsigned eh2s_machine(const eh2s_file *f);
/* 1 for relocatable objects (ET_REL), 0 for executables/libraries. */
int eh2s_is_relocatable(const eh2s_file *f);
/* 1 if the input already has an .sframe section. */
int eh2s_has_sframe(const eh2s_file *f);

/* ---- Conversion ------------------------------------------------------ */

/* Why a function is not in the .sframe section. Values below
 * EH2S_SKIP_NO_RELOCATION are stable; newer libraries may report other
 * values: always print them with eh2s_skip_name. */
enum {
	EH2S_SKIP_NONE = 0,         /* converted */
	EH2S_SKIP_BAD_CFI,          /* its FDE or CIE is malformed */
	EH2S_SKIP_EMPTY,            /* zero-length range */
	EH2S_SKIP_CFA_EXPR,         /* CFA is a DWARF expression */
	EH2S_SKIP_CFA_INVALID,      /* offset applied to an expression CFA */
	EH2S_SKIP_CFA_UNSET,        /* some row has no CFA */
	EH2S_SKIP_CFA_REG,          /* CFA based on a register SFrame lacks */
	EH2S_SKIP_RA_RULE,          /* return address rule not expressible */
	EH2S_SKIP_FP_RULE,          /* frame pointer rule not expressible */
	EH2S_SKIP_OFFSET_RANGE,     /* an offset too wide */
	EH2S_SKIP_TOO_LARGE,        /* function larger than 4 GiB */
	EH2S_SKIP_DUPLICATE,        /* overlaps an earlier FDE */
	EH2S_SKIP_UNSUPPORTED_ABI,
	EH2S_SKIP_SP_RULE,          /* stack pointer not CFA-derived */
	EH2S_SKIP_CFA_ALIGN,        /* s390x: misaligned CFA offset */
	EH2S_SKIP_PLT_SHAPE,        /* PLT expression of an unusable shape */
	EH2S_SKIP_NO_RELOCATION = 1000, /* ET_REL: FDE start not relocated */
};

/* "converted", "cfa-expression", "no-relocation", ...; "unknown" for a
 * value this library does not know. */
const char *eh2s_skip_name(int reason);

/* One DWARF FDE (function) of the input and what became of it. */
typedef struct {
	uint64_t pc;        /* start: vaddr, or section offset for ET_REL */
	uint64_t size;      /* pc range in bytes */
	unsigned shndx;     /* ET_REL: section of the function, else 0 */
	const char *name;   /* symbol name, or NULL when unknown */
	int reason;         /* EH2S_SKIP_NONE when converted */
} eh2s_function;

/* Called from eh2s_convert for each skipped function (each function when
 * opts.report_all), in .eh_frame order, before it returns. */
typedef void (*eh2s_function_cb)(void *ctx, const eh2s_function *fn);

typedef struct {
	int sframe_version;  /* 0 (default) or 3: SFrame V3; 2: V2 for older
	                      * consumers (functions V2 cannot describe are
	                      * skipped and counted). */
	int share_fres;      /* 1: functions with identical frame rows share
	                      * one stored copy (smaller; libsframe 2.47 only
	                      * reads it in the host's byte order). */
	int force;           /* rebuild an existing .sframe (linked files) */
	int debug_frame;     /* read .debug_frame even if .eh_frame exists */
	int report_all;      /* call on_function for converted ones too */
	eh2s_function_cb on_function;
	void *cb_ctx;
} eh2s_convert_opts;

/* Defaults: V3, no sharing, no force, .eh_frame first, no callback. */
void eh2s_convert_opts_init(eh2s_convert_opts *o);

/* Build the converted image in memory. EXISTS when the input already has
 * .sframe and !force (the handle is unchanged); NO_FUNCS when no function
 * can be converted. Can be called again with other options. */
eh2s_status eh2s_convert(eh2s_file *f, const eh2s_convert_opts *o,
			 eh2s_error *err);

/* Totals of the last successful eh2s_convert.
 * functions == converted + sum(skipped[]) + unrelocated. */
typedef struct {
	size_t functions;    /* DWARF FDEs */
	size_t converted;
	size_t skipped[32];  /* by reason (index = EH2S_SKIP_*; [0] unused) */
	size_t unrelocated;  /* EH2S_SKIP_NO_RELOCATION */
	size_t sframe_bytes; /* size of the .sframe section(s) */
	size_t sframe_sections;
} eh2s_summary;

eh2s_status eh2s_get_summary(const eh2s_file *f, eh2s_summary *out,
			     eh2s_error *err);

/* Per-function results of the last eh2s_convert, in .eh_frame order
 * (*fns owned by f). */
eh2s_status eh2s_get_functions(const eh2s_file *f, const eh2s_function **fns,
			       size_t *n, eh2s_error *err);

/* The whole converted ELF image (after eh2s_convert), or the input
 * image before. */
const uint8_t *eh2s_image(const eh2s_file *f, size_t *size);

/* The bytes of .sframe section `index` of the current image (one per
 * COMDAT group in relocatable files; usually one). *vaddr gets its
 * address (0 for ET_REL). USAGE when index >= count. */
size_t eh2s_sframe_count(const eh2s_file *f);
eh2s_status eh2s_sframe_section(const eh2s_file *f, size_t index,
				const uint8_t **data, size_t *size,
				uint64_t *vaddr, eh2s_error *err);

/* ---- Verification and output ----------------------------------------- */

typedef struct {
	size_t functions;    /* DWARF FDEs */
	size_t match;        /* in .sframe and equal to DWARF at every row */
	size_t mismatch;
	size_t missing;      /* expressible but absent */
	size_t skipped;      /* not expressible (or bad CFI) and absent */
	size_t extra;        /* .sframe functions without DWARF */
	size_t points;       /* PCs at which both sides were unwound */
} eh2s_verify_result;

/* Check the current image's .sframe against the input's DWARF CFI: at
 * every DWARF row, FRE and function boundary (every PC of MASK FDEs) the
 * caller's CFA, SP, return address, FP and RA signing state are computed
 * from both and compared. The verifier shares no rule code with the
 * converter (its own CFI walk and Appendix A reading), and checks any
 * producer's .sframe.
 * EH2S_E_VERIFY when a function mismatches or is extra; *out is filled
 * in that case too. */
eh2s_status eh2s_verify(const eh2s_file *f, eh2s_verify_result *out,
			eh2s_error *err);

/* Write the current image to path atomically (temporary file in the same
 * directory, then rename). mode: permission bits, or -1 for those of the
 * file eh2s_open read (0755 for eh2s_open_mem). */
eh2s_status eh2s_write(const eh2s_file *f, const char *path, int mode,
		       eh2s_error *err);

/* ---- Statistics ------------------------------------------------------ */

typedef struct {
	uint64_t eh_frame_size;     /* 0 when absent */
	uint64_t eh_frame_hdr_size;
	uint64_t debug_frame_size;
	uint64_t sframe_size;       /* existing .sframe section(s) */
	size_t sframe_fdes;         /* in the existing .sframe */
	size_t sframe_fres;
	int sframe_version;         /* of the existing .sframe, 0 if none */
	/* What a default conversion would give (dry run): */
	size_t functions, converted, unrelocated;
	size_t skipped[32];
	size_t fres;                /* frame row entries */
	uint64_t projected_sframe_size;
	uint64_t code_bytes, code_bytes_converted; /* sum of FDE ranges */
} eh2s_stats;

/* Statistics of the current image. An unreadable CFI section or .sframe
 * is an error. */
eh2s_status eh2s_get_stats(const eh2s_file *f, eh2s_stats *out,
			   eh2s_error *err);

#ifdef __cplusplus
}
#endif

/* ---- Working on files by path (what the eh2sframe command does) ------ *
 * These read the named file directly (streamed or mapped, never copied
 * into a handle) and report in the same words as the eh2sframe command.
 * Errors and messages follow the conventions above; err->message never
 * names the file (callers print it). */
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Free memory this library returned to the caller (eh2s_encode_sframe_file). */
void eh2s_free(void *p);

/* Called once per message (a line without "\n"). */
typedef void (*eh2s_message_cb)(void *ctx, const char *message);

/* Print the DWARF CFI rows of path to out in the --dump-cfi text format
 * (one header line "# PATH SECTION abi=... fdes=N bad=N", then one block
 * per FDE). debug_frame: read .debug_frame even when .eh_frame exists.
 * A malformed FDE is listed in the dump and, when on_bad_fde is not
 * NULL, reported through it ("SECTION+0xOFF: what"); it is no error.
 * Fails only when the file or its CFI section cannot be read. */
eh2s_status eh2s_dump_cfi_file(const char *path, int debug_frame, FILE *out,
			       eh2s_message_cb on_bad_fde, void *cb_ctx,
			       eh2s_error *err);

/* Print the .sframe section(s) of path to out (the --dump format, close
 * to objdump --sframe; relocatable files get their function starts from
 * .rela.sframe). heading, when not NULL, is printed first, followed by a
 * newline, once the section has been read. BAD_SFRAME when malformed. */
eh2s_status eh2s_dump_sframe_file(const char *path, const char *heading,
				  FILE *out, eh2s_error *err);

/* One difference eh2s_verify_file found. */
enum {
	EH2S_ISSUE_MISMATCH = 0, /* in .sframe, but some row differs */
	EH2S_ISSUE_MISSING,      /* expressible, not in .sframe */
	EH2S_ISSUE_EXTRA,        /* in .sframe, no DWARF FDE covers it */
	EH2S_ISSUE_SKIPPED,      /* not expressible in SFrame (what says why),
	                          * not in .sframe */
};

typedef struct {
	int kind;            /* EH2S_ISSUE_* */
	int relocatable;     /* 1: pc is an offset in section shndx */
	uint64_t pc;         /* where the difference is */
	unsigned shndx;
	const char *name;    /* function symbol, NULL when unknown (extra) */
	const char *what;    /* what differs */
} eh2s_verify_issue;

typedef void (*eh2s_verify_cb)(void *ctx, const eh2s_verify_issue *issue);

typedef struct {
	const char *cfi_from;  /* read the DWARF CFI from this file (the
	                        * original of a converted file); NULL: from
	                        * the checked file itself */
	int debug_frame;       /* read .debug_frame even if .eh_frame exists */
	eh2s_verify_cb on_issue; /* mismatching and extra functions */
	void *cb_ctx;
	int report_missing;    /* call on_issue for missing ones too */
	int report_skipped;    /* ... and for skipped ones, with the reason */
} eh2s_verify_opts;

/* Defaults: CFI from the same file, .eh_frame first, no callback. */
void eh2s_verify_opts_init(eh2s_verify_opts *o);

typedef struct {
	eh2s_verify_result counts;
	size_t bad_relocs;   /* .rela.sframe entries of an unexpected type,
	                      * ignored */
	const char *failed;  /* on an error other than VERIFY: the path the
	                      * error is about (path or o->cfi_from) */
} eh2s_verify_file_result;

/* eh2s_verify for the .sframe of path against the DWARF CFI of path (or
 * o->cfi_from). Issues go to o->on_issue while it runs. EH2S_E_VERIFY
 * when a function mismatches or is extra (*out filled). o may be NULL. */
eh2s_status eh2s_verify_file(const char *path, const eh2s_verify_opts *o,
			     eh2s_verify_file_result *out, eh2s_error *err);

/* Options of eh2s_convert_file. */
typedef struct {
	eh2s_convert_opts convert; /* as for eh2s_convert; on_function is
	                            * called for skipped functions only
	                            * (report_all is ignored) and gets size
	                            * and shndx 0 */
	int in_place;        /* out names in (or the file a link of it points
	                      * to): keep its owner too */
	int copy_unchanged;  /* EH2S_COPY_* bits: when there is nothing to
	                      * convert, write out as an exact copy of in
	                      * (the status still says why) */
	const char *symbols_from; /* NULL, or in's separate debug file: its
	                      * .symtab counts, with in's own symbols, when
	                      * deciding what the rewrite may move (README,
	                      * "What may move") */
} eh2s_file_opts;

/* copy_unchanged bits. */
#define EH2S_COPY_EXISTING 1 /* in already has .sframe and !force
                              * (EH2S_E_EXISTS) */
#define EH2S_COPY_NOTHING  2 /* no CFI section (EH2S_E_NO_CFI), an empty
                              * one or no convertible function
                              * (EH2S_E_NO_FUNCS) */

/* Defaults: those of eh2s_convert_opts_init, not in place, no copy. */
void eh2s_file_opts_init(eh2s_file_opts *o);

typedef struct {
	eh2s_summary summary;  /* as eh2s_get_summary */
	/* Where the new data went in the output: */
	uint64_t padding;      /* zero bytes between the old end and it */
	uint64_t shift;        /* >0: program headers moved to the file start
	                        * and every old byte this far down */
	int phdrs_moved;       /* the program header table moved */
	int phdrs_tied;        /* ... to where old loaders still find it */
	uint64_t moved_bytes;  /* the table grew where it is: bytes of the
	                        * sections after it moved to the new segment */
	char layout_note[96];  /* why the table could not grow where it is
	                        * over the sections after it ("" if no such
	                        * reason decided the layout) */
} eh2s_file_result;

/* Convert the file in and write the result to out (atomically through a
 * temporary file in out's directory; out may equal in). On failure out
 * is not touched. EXISTS: in already has .sframe and !force; NO_CFI: no
 * .eh_frame or .debug_frame; NO_FUNCS: nothing convertible (an empty CFI
 * section, or every function skipped; *res filled). In these three cases
 * out is written only as a copy of in, as copy_unchanged asks (never when
 * out is in). *res (may be NULL) is filled on success and NO_FUNCS. */
eh2s_status eh2s_convert_file(const char *in, const char *out,
			      const eh2s_file_opts *o, eh2s_file_result *res,
			      eh2s_error *err);

/* ---- Separate debug files --------------------------------------------
 * A debug file cut off a program or library (objcopy --only-keep-debug,
 * as dh_strip does; eu-strip -f, as RPM's find-debuginfo does) keeps the
 * section and program headers of the file as it was then. Converting the
 * stripped file afterwards adds .sframe (and a segment, and may move the
 * program header table and the sections right after it): debuggers then
 * warn that .sframe is missing from the debug file and eu-unstrip cannot
 * pair the two. eh2s_update_debug_file makes such a debug file describe
 * the converted file again. */

/* What a linked file says about its separate debug file. */
typedef struct {
	char build_id[129];  /* NT_GNU_BUILD_ID in lowercase hex, "" if none */
	char debuglink[256]; /* the file name in .gnu_debuglink, "" if none */
	int linked;          /* ET_EXEC or ET_DYN (the only types handled) */
} eh2s_debug_refs;

eh2s_status eh2s_debug_refs_read(const char *path, eh2s_debug_refs *out,
				 eh2s_error *err);

typedef struct {
	int changed;         /* 0: debug already matched file; not rewritten */
	size_t added;        /* section headers added (SHT_NOBITS) */
	size_t moved;        /* sections given their new address */
	int crc_updated;     /* file's .gnu_debuglink CRC now matches debug */
} eh2s_debug_result;

/* Rewrite debug (atomically, keeping its mode and owner; a symbolic link
 * is followed) so that its headers match the converted file: every
 * allocated section of file gets a header there (SHT_NOBITS where debug
 * has none), sections keep file's addresses (symbols of .symtab follow a
 * moved section), and the program header table is file's, at file's
 * e_phoff (eu-unstrip keeps the stripped file's layout and takes e_phoff
 * from the debug file). Section contents, .debug_* included, are not
 * changed. When file's .gnu_debuglink names debug, its CRC is updated
 * (file rewritten atomically like a conversion). Both must be ET_EXEC or ET_DYN of the same machine; USAGE when
 * debug is not file's debug file (another build ID, or a section of
 * another size). res may be NULL. */
eh2s_status eh2s_update_debug_file(const char *file, const char *debug,
				   eh2s_debug_result *res, eh2s_error *err);

/* Build just the bytes of an .sframe section from path's CFI, for a
 * section at vaddr (linked files); for tests and tools that place the
 * section themselves. */
typedef struct {
	int debug_frame;
	int sframe_version;  /* 0 or 3: V3; 2: V2 */
	int share_fres;
	uint64_t vaddr;
} eh2s_encode_opts;

typedef struct {
	size_t functions;          /* projected functions (FDEs kept) */
	size_t outcome[32];        /* FDEs per reason (index EH2S_SKIP_*,
	                            * [0] = converted) */
	size_t bytes;
	uint64_t fre_bytes;        /* FRE sub-section as written */
	uint64_t fre_bytes_unshared; /* ... without share_fres */
	uint64_t shared_fdes;      /* FDEs pointing at another's FREs */
} eh2s_encode_info;

/* *data (free with eh2s_free) gets the section bytes. */
eh2s_status eh2s_encode_sframe_file(const char *path,
				    const eh2s_encode_opts *o, void **data,
				    size_t *size, eh2s_encode_info *info,
				    eh2s_error *err);

#ifdef __cplusplus
}
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Sections in memory: bytes in, bytes out (linkers, JIT runtimes) --
 * No file and no ELF: the caller hands over a CFI section it holds in
 * memory (a linker's merged output .eh_frame, the .eh_frame a JIT builds
 * for generated code before __register_frame) and gets the bytes of the
 * .sframe section that describes the same functions, laid out for the
 * address the caller will give it. 64-bit targets only. */

typedef enum {
	EH2S_CFI_EH_FRAME = 0,   /* .eh_frame (GNU, DW_EH_PE pointers) */
	EH2S_CFI_DEBUG_FRAME,    /* .debug_frame (DWARF 2-4, absolute) */
} eh2s_cfi_kind;

/* Reads size (4 or 8) bytes at addr in the target's byte order into
 * *out; returns 0 on success. Only needed for FDEs whose initial
 * location is DW_EH_PE_indirect; NULL makes such FDEs bad. */
typedef int (*eh2s_read_mem_fn)(void *ctx, uint64_t addr, unsigned size,
				uint64_t *out);

/* A CFI section in memory, as the target will see it once loaded. */
typedef struct {
	unsigned machine;     /* EM_X86_64 (62), EM_AARCH64 (183), EM_S390 (22) */
	int big_endian;       /* 1: MSB data (s390x; AArch64 big-endian) */
	int kind;             /* eh2s_cfi_kind */
	const void *data;     /* the section bytes (borrowed) */
	size_t size;
	uint64_t addr;        /* address of data[0] at run time: the base of
	                       * DW_EH_PE_pcrel pointers */
	uint64_t text_base;   /* DW_EH_PE_textrel base (0 if unused) */
	uint64_t data_base;   /* DW_EH_PE_datarel base (0 if unused) */
	eh2s_read_mem_fn read_mem; /* may be NULL */
	void *read_mem_ctx;
} eh2s_cfi_input;

typedef struct {
	int sframe_version;   /* 0 or 3: V3 (default); 2: V2 */
	int share_fres;       /* as eh2s_convert_opts.share_fres */
	int report_all;       /* call on_function for converted ones too */
	eh2s_function_cb on_function; /* skipped functions, in section
	                               * order; name NULL, shndx 0 */
	void *cb_ctx;
} eh2s_section_opts;

/* Defaults: V3, no sharing, no callback. */
void eh2s_section_opts_init(eh2s_section_opts *o);

/* Convert in->data into an .sframe section that will live at address
 * sframe_addr (function starts are stored relative to it: V3 flags
 * FDE_SORTED | FDE_FUNC_START_PCREL). *sframe (free with eh2s_free)
 * receives the bytes, *sframe_size their count. *sum (may be NULL) gets
 * the per-reason totals (sframe_sections 1, unrelocated 0), also when
 * the status is NO_FUNCS. o may be NULL.
 * Errors: USAGE (NULL pointers, bad option), UNSUPPORTED (machine or
 * byte order), BAD_CFI (the section is unreadable as a whole; a single
 * bad FDE is only skipped), NO_FUNCS (nothing convertible: *sframe stays
 * NULL). Deterministic: the same input gives the same bytes. */
eh2s_status eh2s_convert_section(const eh2s_cfi_input *in,
				 uint64_t sframe_addr,
				 const eh2s_section_opts *o, void **sframe,
				 size_t *sframe_size, eh2s_summary *sum,
				 eh2s_error *err);

/* Check the .sframe bytes sframe[0..size), located at sframe_addr,
 * against the CFI of in at every DWARF row and FRE boundary, as
 * eh2s_verify does for files. on_issue (may be NULL) gets each
 * mismatching and extra function (relocatable 0, name NULL) and, with
 * report_missing, each missing one. EH2S_E_VERIFY when a function
 * mismatches or is extra (*out filled); BAD_SFRAME when the bytes are
 * malformed. */
eh2s_status eh2s_verify_section(const eh2s_cfi_input *in,
				const void *sframe, size_t size,
				uint64_t sframe_addr, eh2s_verify_cb on_issue,
				void *cb_ctx, int report_missing,
				eh2s_verify_result *out, eh2s_error *err);

#ifdef __cplusplus
}
#endif

#endif
