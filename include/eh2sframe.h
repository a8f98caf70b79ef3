/* eh2sframe — add an SFrame stack-trace section, built from the DWARF
 * call-frame information (.eh_frame / .debug_frame), to 64-bit ELF files
 * (x86-64, AArch64, s390x), or turn a CFI section held in memory into
 * the bytes of an .sframe section (linkers, JIT runtimes).
 *
 * Example (`make check` compiles and runs it: tests/e2e/lib_examples.sh):
 *
 *     #include <eh2sframe.h>
 *     #include <stdio.h>
 *
 *     int main(int argc, char **argv)
 *     {
 *             eh2s_file *f = NULL;
 *             eh2s_summary sum;
 *             eh2s_error err;
 *             int rc = 1;
 *
 *             if (argc != 3) {
 *                     fprintf(stderr, "usage: %s IN OUT\n", argv[0]);
 *                     return 2;
 *             }
 *             eh2s_summary_init(&sum);
 *             if (eh2s_open(argv[1], &f, &err) == EH2S_OK &&
 *                 eh2s_convert(f, NULL, &err) == EH2S_OK &&
 *                 eh2s_get_summary(f, &sum, &err) == EH2S_OK &&
 *                 eh2s_write(f, argv[2], -1, &err) == EH2S_OK) {
 *                     printf("%zu of %zu functions converted\n",
 *                            sum.converted, sum.functions);
 *                     rc = 0;
 *             } else {
 *                     fprintf(stderr, "%s: %s\n", argv[1], err.message);
 *             }
 *             eh2s_close(f);
 *             return rc;
 *     }
 *
 * Conventions:
 * - Every fallible function returns an eh2s_status (EH2S_OK == 0) and,
 *   when its last argument `err` is not NULL, fills it with the same code
 *   and a one-line message (for example ".eh_frame+0x40: unknown DW_CFA
 *   opcode: 0x2f"). The library never prints (except to a FILE * it is
 *   given) and never exits.
 * - Memory: a handle (eh2s_file) is opaque and owns everything it
 *   returns; those pointers stay valid until the next call that changes
 *   the handle (eh2s_convert) or eh2s_close. Buffers the library
 *   allocates for the caller (eh2s_convert_section) are freed with
 *   eh2s_free. Input bytes are borrowed for the call only.
 * - Threads: no global state. Different handles, and calls that take no
 *   handle, may run in different threads at the same time; one handle
 *   must not be used by two threads at once. Callbacks run in the
 *   calling thread, before the call returns.
 * - Link with `pkg-config --cflags --libs eh2sframe` (static:
 *   `pkg-config --static ...`).
 *
 * Keeping the ABI (libeh2sframe.so.EH2S_VERSION_MAJOR):
 * - Every struct passed to or returned by the library starts with
 *   `size_t size`: the size of the struct as the caller's header has it.
 *   Set it with the struct's *_init function (an inline function of this
 *   header that clears the struct and sets size; every field's default
 *   is 0 or NULL). The library checks it: smaller than the first
 *   release's struct is EH2S_E_USAGE; larger than its own struct (a
 *   caller built against a newer header) is accepted when every byte it
 *   does not know is zero, else EH2S_E_UNSUPPORTED. Output structs are
 *   filled up to the smaller of the two sizes; fields an older library
 *   does not know keep what *_init put there. Structs only grow at the
 *   end; lists are caller-sized arrays or handle getters, never fixed
 *   arrays. Structs the library hands out (eh2s_function,
 *   eh2s_verify_issue) carry their size the same way.
 * - Enums are complete for this version. A newer library may return
 *   values a caller's header does not list: any status other than
 *   EH2S_OK is a failure (print err.message; eh2s_strerror says "unknown
 *   error" for a code it does not know); a skip reason at or beyond
 *   EH2S_SKIP_COUNT is a function skipped for a reason eh2s_skip_name
 *   names; an issue kind it does not know is a difference of another
 *   kind. Values passed in that the library does not know (an SFrame
 *   version, a CFI kind) are refused with EH2S_E_UNSUPPORTED.
 * - Only names starting with eh2s_ / EH2S_ are defined. New functions
 *   get a new symbol version; an incompatible change changes the soname
 *   together with EH2S_VERSION_MAJOR.
 */
#ifndef EH2SFRAME_H
#define EH2SFRAME_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The release. MAJOR is also the ABI number, the soname's
 * (libeh2sframe.so.MAJOR). */
#define EH2S_VERSION_MAJOR 1
#define EH2S_VERSION_MINOR 3
#define EH2S_VERSION_PATCH 0

/* "1.0.0": the version of the library actually linked. */
const char *eh2s_version(void);

/* Defines TYPE_init(TYPE *s): clears *s and sets s->size (see "Keeping
 * the ABI" above). */
#define EH2S_DEFINE_INIT_(type)                                          \
	static inline void type##_init(type *s)                          \
	{                                                                \
		static type zero_;                                       \
		*s = zero_;                                              \
		s->size = sizeof *s;                                     \
	}

/* ---- Errors ---------------------------------------------------------- */

typedef enum {
	EH2S_OK = 0,
	EH2S_E_NOMEM,        /* out of memory */
	EH2S_E_IO,           /* reading or writing a file failed */
	EH2S_E_NOT_ELF,      /* input is not an ELF file */
	EH2S_E_BAD_ELF,      /* malformed or truncated ELF file */
	EH2S_E_UNSUPPORTED,  /* machine, ELF class, option or struct field
	                      * not supported */
	EH2S_E_NO_CFI,       /* no .eh_frame or .debug_frame */
	EH2S_E_BAD_CFI,      /* CFI section unreadable as a whole */
	EH2S_E_BAD_SFRAME,   /* an existing .sframe is malformed */
	EH2S_E_EXISTS,       /* already has .sframe (see opts.force) */
	EH2S_E_NO_FUNCS,     /* no function could be converted */
	EH2S_E_VERIFY,       /* verification found mismatching functions */
	EH2S_E_USAGE,        /* invalid argument or call order */
	EH2S_E_INTERNAL,     /* a bug in eh2sframe */
} eh2s_status;

/* Filled by every fallible call given one. Its layout never changes. */
typedef struct {
	eh2s_status code;
	char message[320];   /* "" for EH2S_OK */
} eh2s_error;

/* Short fixed text for a status ("not an ELF file"). */
const char *eh2s_strerror(eh2s_status code);

/* Free memory this library returned to the caller. */
void eh2s_free(void *p);

/* ---- Opening --------------------------------------------------------- */

typedef struct eh2s_file eh2s_file;

/* Read path whole into memory. Fails with NOT_ELF, BAD_ELF (truncated
 * too), UNSUPPORTED (32-bit or another machine), IO. The file may change
 * or disappear afterwards: the handle works on its own copy. */
eh2s_status eh2s_open(const char *path, eh2s_file **out, eh2s_error *err);
/* The same from a buffer (copied; the caller keeps ownership). */
eh2s_status eh2s_open_mem(const void *data, size_t size, eh2s_file **out,
			  eh2s_error *err);
/* NULL is allowed. */
void eh2s_close(eh2s_file *f);

/* e_machine (EM_X86_64 62, EM_AARCH64 183, EM_S390 22). */
unsigned eh2s_machine(const eh2s_file *f);
/* 1 for relocatable objects (ET_REL), 0 for executables/libraries. */
int eh2s_is_relocatable(const eh2s_file *f);
/* 1 if the input already has an .sframe section. */
int eh2s_has_sframe(const eh2s_file *f);

/* ---- Conversion ------------------------------------------------------ */

/* Why a function is not in the .sframe section: every reason the
 * converter reports (README, "What the converter skips"). */
typedef enum {
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
	EH2S_SKIP_UNSUPPORTED_ABI,  /* machine SFrame has no ABI for */
	EH2S_SKIP_SP_RULE,          /* stack pointer not CFA-derived */
	EH2S_SKIP_CFA_ALIGN,        /* s390x: misaligned CFA offset */
	EH2S_SKIP_PLT_SHAPE,        /* PLT expression of an unusable shape */
	EH2S_SKIP_V2,               /* SFrame V2 asked for: flexible FDE or
	                             * signal frame */
	EH2S_SKIP_PC_RELATIVE,      /* AMD64: a rule based on DWARF
	                             * register 16 (the PC) */
	EH2S_SKIP_RA_SIGN_PC,       /* AArch64: RA signed with the PC as a
	                             * modifier (PAuth_LR) */
	EH2S_SKIP_RA_SIGN_STATE,    /* AArch64: RA_SIGN_STATE not a constant
	                             * 0 or 1 */
	EH2S_SKIP_CIE_PTR_WIDTH,    /* malformed: an 8-byte CIE pointer in a
	                             * 32-bit record (Free Pascal) */
	EH2S_SKIP_COUNT,            /* reasons this header knows; a newer
	                             * library may report more */
	EH2S_SKIP_NO_RELOCATION = 1000, /* ET_REL: FDE start not relocated */
} eh2s_skip_reason;

/* "converted", "cfa-expression", "no-relocation", ...; "unknown" for a
 * value this library does not know. */
const char *eh2s_skip_name(int reason);
/* Reasons this library knows (EH2S_SKIP_COUNT of the header it was
 * built with): the length of a by_reason array that misses none. */
size_t eh2s_skip_reason_count(void);

/* One DWARF FDE (function) of the input and what became of it. */
typedef struct {
	size_t size;        /* sizeof this struct, as the library has it */
	uint64_t pc;        /* start: vaddr, or section offset for ET_REL */
	uint64_t pc_range;  /* length in bytes */
	unsigned shndx;     /* ET_REL: section of the function, else 0 */
	const char *name;   /* symbol name, or NULL when unknown */
	int reason;         /* eh2s_skip_reason; EH2S_SKIP_NONE: converted */
} eh2s_function;

/* Called for each skipped function (each function with report_all), in
 * .eh_frame order, before the converting call returns; fn is valid
 * during the call only. */
typedef void (*eh2s_function_cb)(void *ctx, const eh2s_function *fn);

typedef struct {
	size_t size;         /* eh2s_convert_opts_init */
	int sframe_version;  /* 0 (default) or 3: SFrame V3; 2: V2 for older
	                      * consumers (functions V2 cannot describe are
	                      * skipped and counted) */
	int share_fres;      /* functions with identical frame rows share
	                      * one stored copy (10-40% smaller). 0 (default):
	                      * on little-endian targets (x86-64, AArch64),
	                      * not on big-endian ones (s390x), as libsframe
	                      * 2.47 rejects shared rows it has to byte-swap;
	                      * > 0: on every target; < 0: never */
	int force;           /* rebuild an existing .sframe (linked files) */
	int debug_frame;     /* read .debug_frame even if .eh_frame exists */
	int report_all;      /* call on_function for converted ones too */
	eh2s_function_cb on_function;
	void *cb_ctx;
} eh2s_convert_opts;

/* Defaults: V3, sharing where every reader accepts it, no force,
 * .eh_frame first, no callback. */
EH2S_DEFINE_INIT_(eh2s_convert_opts)

/* Build the converted image in memory. o may be NULL (defaults). EXISTS
 * when the input already has .sframe and !force (the handle is
 * unchanged); NO_FUNCS when no function can be converted. Can be called
 * again with other options. */
eh2s_status eh2s_convert(eh2s_file *f, const eh2s_convert_opts *o,
			 eh2s_error *err);

/* Totals of a conversion.
 * functions == converted + skipped_total + unrelocated. */
typedef struct {
	size_t size;         /* eh2s_summary_init */
	/* In: where the per-reason counts go. by_reason[r] gets the number
	 * of functions with reason r (eh2s_skip_reason; [EH2S_SKIP_NONE] =
	 * converted) for r < by_reason_len; NULL/0 for none. An array of
	 * EH2S_SKIP_COUNT (or eh2s_skip_reason_count()) entries misses
	 * none. */
	size_t *by_reason;
	size_t by_reason_len;
	/* Out: */
	size_t functions;    /* DWARF FDEs */
	size_t converted;
	size_t skipped_total; /* skipped for any reason but no-relocation */
	size_t unrelocated;  /* EH2S_SKIP_NO_RELOCATION */
	size_t sframe_bytes; /* size of the .sframe section(s) */
	size_t sframe_sections;
	/* A relocatable object's SFrame V2 .sframe was rebuilt as V3 (GNU
	 * ld 2.46.1 and later ignore V2 input; linked files keep V2, which
	 * glibc reads). Added in 1.1: callers with an older struct size do
	 * not get it. */
	int v2_rebuilt;
} eh2s_summary;

EH2S_DEFINE_INIT_(eh2s_summary)

/* Totals of the last successful eh2s_convert. */
eh2s_status eh2s_get_summary(const eh2s_file *f, eh2s_summary *out,
			     eh2s_error *err);

/* Per-function results of the last eh2s_convert, in .eh_frame order:
 * count (0 before a conversion), and function i (owned by f; NULL when
 * i >= count). */
size_t eh2s_function_count(const eh2s_file *f);
const eh2s_function *eh2s_function_at(const eh2s_file *f, size_t i);

/* The whole converted ELF image (after eh2s_convert), or the input
 * image before. */
const uint8_t *eh2s_image(const eh2s_file *f, size_t *size);

/* The bytes of .sframe section `index` of the current image (one per
 * COMDAT group in relocatable files; usually one). *vaddr (may be NULL)
 * gets its address (0 for ET_REL). USAGE when index >= count. */
size_t eh2s_sframe_count(const eh2s_file *f);
eh2s_status eh2s_sframe_section(const eh2s_file *f, size_t index,
				const uint8_t **data, size_t *size,
				uint64_t *vaddr, eh2s_error *err);

/* ---- Verification and output ----------------------------------------- */

typedef struct {
	size_t size;         /* eh2s_verify_result_init */
	size_t functions;    /* DWARF FDEs */
	size_t match;        /* in .sframe and equal to DWARF at every row */
	size_t mismatch;
	size_t missing;      /* expressible but absent */
	size_t skipped;      /* not expressible (or bad CFI) and absent */
	size_t extra;        /* .sframe functions without DWARF */
	size_t points;       /* PCs at which both sides were unwound */
	size_t bad_relocs;   /* eh2s_verify_file: .rela.sframe entries of an
	                      * unexpected type, ignored */
	const char *failed_path; /* eh2s_verify_file, on an error other than
	                      * VERIFY: the path the error is about (the
	                      * checked file or opts.cfi_from) */
} eh2s_verify_result;

EH2S_DEFINE_INIT_(eh2s_verify_result)

/* Check the current image's .sframe against the input's DWARF CFI: at
 * every DWARF row, FRE and function boundary (every PC of MASK FDEs) the
 * caller's CFA, SP, return address, FP and RA signing state are computed
 * from both and compared. The verifier shares no rule code with the
 * converter (its own CFI walk and Appendix A reading), and checks any
 * producer's .sframe. out may be NULL.
 * EH2S_E_VERIFY when a function mismatches or is extra; *out is filled
 * in that case too. */
eh2s_status eh2s_verify(const eh2s_file *f, eh2s_verify_result *out,
			eh2s_error *err);

/* Write the current image to path atomically (temporary file in the same
 * directory, then rename). mode: permission bits, or -1 for those of the
 * file eh2s_open read (0755 for eh2s_open_mem). A symbolic link's target
 * is written, the link kept; a path that is not a regular file (a device,
 * a FIFO) is written into, as cp does, never replaced. */
eh2s_status eh2s_write(const eh2s_file *f, const char *path, int mode,
		       eh2s_error *err);

/* ---- Statistics ------------------------------------------------------ */

typedef struct {
	size_t size;                /* eh2s_stats_init */
	size_t *by_reason;          /* in: as eh2s_summary.by_reason, for
	                             * the dry run */
	size_t by_reason_len;
	uint64_t eh_frame_size;     /* 0 when absent */
	uint64_t eh_frame_hdr_size;
	uint64_t debug_frame_size;
	uint64_t sframe_size;       /* existing .sframe section(s) */
	size_t sframe_fdes;         /* in the existing .sframe */
	size_t sframe_fres;
	int sframe_version;         /* of the existing .sframe, 0 if none */
	/* What a default conversion would give (dry run): */
	size_t functions, converted, unrelocated, skipped_total;
	size_t fres;                /* frame row entries */
	uint64_t projected_sframe_size;
	uint64_t code_bytes, code_bytes_converted; /* sum of FDE ranges */
} eh2s_stats;

EH2S_DEFINE_INIT_(eh2s_stats)

/* Statistics of the current image. An unreadable CFI section or .sframe
 * is an error. */
eh2s_status eh2s_get_stats(const eh2s_file *f, eh2s_stats *out,
			   eh2s_error *err);

/* ---- Working on files by path (what the eh2sframe command does) ------ *
 * These read the named file directly (streamed or mapped, never copied
 * into a handle) and report in the same words as the eh2sframe command.
 * Errors and messages follow the conventions above; err->message never
 * names the file (callers print it). */

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

/* One difference a verification found. */
typedef enum {
	EH2S_ISSUE_MISMATCH = 0, /* in .sframe, but some row differs */
	EH2S_ISSUE_MISSING,      /* expressible, not in .sframe */
	EH2S_ISSUE_EXTRA,        /* in .sframe, no DWARF FDE covers it */
	EH2S_ISSUE_SKIPPED,      /* not expressible in SFrame (what says why),
	                          * not in .sframe */
} eh2s_issue_kind;

typedef struct {
	size_t size;         /* sizeof this struct, as the library has it */
	int kind;            /* eh2s_issue_kind */
	int relocatable;     /* 1: pc is an offset in section shndx */
	uint64_t pc;         /* where the difference is */
	unsigned shndx;
	const char *name;    /* function symbol, NULL when unknown (extra;
	                      * always for sections in memory) */
	const char *what;    /* what differs */
} eh2s_verify_issue;

/* issue is valid during the call only. */
typedef void (*eh2s_verify_cb)(void *ctx, const eh2s_verify_issue *issue);

typedef struct {
	size_t size;           /* eh2s_verify_opts_init */
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
EH2S_DEFINE_INIT_(eh2s_verify_opts)

/* eh2s_verify for the .sframe of path against the DWARF CFI of path (or
 * o->cfi_from). Issues go to o->on_issue while it runs. EH2S_E_VERIFY
 * when a function mismatches or is extra (*out filled). o and out may be
 * NULL. */
eh2s_status eh2s_verify_file(const char *path, const eh2s_verify_opts *o,
			     eh2s_verify_result *out, eh2s_error *err);

/* Options of eh2s_convert_file. */
typedef struct {
	size_t size;         /* eh2s_file_opts_init */
	const eh2s_convert_opts *convert; /* NULL: defaults; as for
	                      * eh2s_convert, but on_function is called for
	                      * skipped functions only (report_all is
	                      * ignored) and gets pc_range and shndx 0 */
	int in_place;        /* out names in (or the file a link of it points
	                      * to): keep its owner, set-ID bits and extended
	                      * attributes too (as when out is in's inode);
	                      * a new out has in's mode less set-ID bits.
	                      * out is synced before the rename only when it
	                      * is in's inode (and not no_sync): a caller
	                      * staging in place under another name syncs
	                      * (and renames) itself */
	int copy_unchanged;  /* EH2S_COPY_* bits: when there is nothing to
	                      * convert, write out as an exact copy of in
	                      * (the status still says why) */
	const char *symbols_from; /* NULL, or in's separate debug file: its
	                      * .symtab counts, with in's own symbols, when
	                      * deciding what the rewrite may move (README,
	                      * "What may move") */
	/* Do not fsync out before renaming it over in's inode (in place):
	 * no wait for the disk, for files that can be made again (build
	 * products, a package's staging tree, synced when installed).
	 * After a crash out may still be the old file, or on some
	 * filesystems an empty or partly written one. Added in 1.2: a 1.1
	 * library refuses it set (EH2S_E_UNSUPPORTED). */
	int no_sync;
	/* out is a staging name of the caller's own, which must not exist
	 * (EH2S_E_IO if it does), renamed by the caller later: it is
	 * created and written directly, with no temporary file of its
	 * own and no rename, never synced, and removed on failure. One
	 * file creation and one rename less per file, in a directory that
	 * other writers may be waiting for. Added in 1.3: a 1.2 library
	 * refuses it set (EH2S_E_UNSUPPORTED). */
	int new_out;
} eh2s_file_opts;

/* copy_unchanged bits. */
#define EH2S_COPY_EXISTING 1 /* in already has .sframe and !force
                              * (EH2S_E_EXISTS) */
#define EH2S_COPY_NOTHING  2 /* no CFI section (EH2S_E_NO_CFI), an empty
                              * one or no convertible function
                              * (EH2S_E_NO_FUNCS) */

/* Defaults: those of eh2s_convert_opts_init, not in place, no copy,
 * synced. */
EH2S_DEFINE_INIT_(eh2s_file_opts)

/* Where the new data went in the output of eh2s_convert_file. */
typedef struct {
	size_t size;           /* eh2s_file_result_init */
	uint64_t padding;      /* zero bytes between the old end and it */
	uint64_t shift;        /* >0: program headers moved to the file start
	                        * and every old byte this far down */
	int phdrs_moved;       /* the program header table moved */
	int phdrs_tied;        /* ... to where old loaders still find it */
	uint64_t moved_bytes;  /* the table grew where it is: bytes of the
	                        * sections after it moved to the new segment */
	char layout_note[96];  /* why the table could not grow where it is
	                        * over the sections after it ("" if no such
	                        * reason decided the layout; a message,
	                        * truncated to fit) */
} eh2s_file_result;

EH2S_DEFINE_INIT_(eh2s_file_result)

/* Convert the file in and write the result to out (atomically through a
 * temporary file in out's directory, or new_out; out may equal in; out
 * a symbolic link or not a regular file: as eh2s_write). On
 * failure out is not touched (new_out: not left). EXISTS: in already has .sframe and !force; NO_CFI: no
 * .eh_frame or .debug_frame; NO_FUNCS: nothing convertible (an empty CFI
 * section, or every function skipped; *sum filled). In these three cases
 * out is written only as a copy of in, as copy_unchanged asks (never when
 * out is in). *sum and *res (each may be NULL) are filled on success,
 * *sum also on NO_FUNCS. o may be NULL. */
eh2s_status eh2s_convert_file(const char *in, const char *out,
			      const eh2s_file_opts *o, eh2s_summary *sum,
			      eh2s_file_result *res, eh2s_error *err);

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
	size_t size;         /* eh2s_debug_refs_init */
	char build_id[129];  /* NT_GNU_BUILD_ID in lowercase hex (at most 64
	                      * bytes of ID), "" if none */
	char debuglink[256]; /* the file name in .gnu_debuglink (a name,
	                      * not a path), "" if none */
	int linked;          /* ET_EXEC or ET_DYN (the only types handled) */
} eh2s_debug_refs;

EH2S_DEFINE_INIT_(eh2s_debug_refs)

eh2s_status eh2s_debug_refs_read(const char *path, eh2s_debug_refs *out,
				 eh2s_error *err);

typedef struct {
	size_t size;         /* eh2s_debug_result_init */
	int changed;         /* 0: debug already matched file; not rewritten */
	size_t added;        /* section headers added (SHT_NOBITS) */
	size_t moved;        /* sections given their new address */
	int crc_updated;     /* file's .gnu_debuglink CRC now matches debug */
} eh2s_debug_result;

EH2S_DEFINE_INIT_(eh2s_debug_result)

/* Rewrite debug (atomically, keeping its mode and owner; a symbolic link
 * is followed) so that its headers match the converted file: every
 * allocated section of file gets a header there (SHT_NOBITS where debug
 * has none), sections keep file's addresses (symbols of .symtab follow a
 * moved section), and the program header table is file's, at file's
 * e_phoff (eu-unstrip keeps the stripped file's layout and takes e_phoff
 * from the debug file). Section contents, .debug_* included, are not
 * changed. When file's .gnu_debuglink names debug, its CRC is updated
 * (file rewritten atomically like a conversion). Both must be ET_EXEC or
 * ET_DYN of the same machine; USAGE when debug is not file's debug file
 * (another build ID, or a section of another size). res may be NULL. */
eh2s_status eh2s_update_debug_file(const char *file, const char *debug,
				   eh2s_debug_result *res, eh2s_error *err);

/* ---- Sections in memory: bytes in, bytes out (linkers, JIT runtimes) --
 * No file and no ELF: the caller hands over a CFI section it holds in
 * memory (a linker's merged output .eh_frame, the .eh_frame a JIT builds
 * for generated code before __register_frame) and gets the bytes of the
 * .sframe section that describes the same functions, laid out for the
 * address the caller will give it. 64-bit targets only. README,
 * "Embedding the library", shows both calls. */

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
	size_t size;          /* eh2s_cfi_input_init */
	unsigned machine;     /* EM_X86_64 (62), EM_AARCH64 (183), EM_S390 (22) */
	int big_endian;       /* 1: MSB data (s390x; AArch64 big-endian) */
	int kind;             /* eh2s_cfi_kind */
	const void *data;     /* the section bytes (borrowed) */
	size_t data_size;
	uint64_t addr;        /* address of data[0] at run time: the base of
	                       * DW_EH_PE_pcrel pointers */
	uint64_t text_base;   /* DW_EH_PE_textrel base (0 if unused) */
	uint64_t data_base;   /* DW_EH_PE_datarel base (0 if unused) */
	eh2s_read_mem_fn read_mem; /* may be NULL */
	void *read_mem_ctx;
} eh2s_cfi_input;

EH2S_DEFINE_INIT_(eh2s_cfi_input)

typedef struct {
	size_t size;          /* eh2s_section_opts_init */
	int sframe_version;   /* 0 or 3: V3 (default); 2: V2 */
	int share_fres;       /* as eh2s_convert_opts.share_fres */
	int report_all;       /* call on_function for converted ones too */
	eh2s_function_cb on_function; /* skipped functions, in section
	                               * order; name NULL, shndx 0 */
	void *cb_ctx;
} eh2s_section_opts;

/* Defaults: V3, sharing where every reader accepts it, no callback. */
EH2S_DEFINE_INIT_(eh2s_section_opts)

/* Convert in->data into an .sframe section that will live at address
 * sframe_addr (function starts are stored relative to it: V3 flags
 * FDE_SORTED | FDE_FUNC_START_PCREL). *sframe (free with eh2s_free)
 * receives the bytes, *sframe_size their count. *sum (may be NULL) gets
 * the totals (sframe_sections 1, unrelocated 0), also when the status
 * is NO_FUNCS. o may be NULL.
 * Errors: USAGE (NULL pointers, a struct without its size), UNSUPPORTED
 * (machine, byte order, kind or SFrame version), NO_CFI (empty input),
 * BAD_CFI (the section is unreadable as a whole; a single bad FDE is
 * only skipped), NO_FUNCS (nothing convertible: *sframe stays NULL).
 * Deterministic: the same input gives the same bytes, and the size does
 * not depend on sframe_addr. */
eh2s_status eh2s_convert_section(const eh2s_cfi_input *in,
				 uint64_t sframe_addr,
				 const eh2s_section_opts *o, void **sframe,
				 size_t *sframe_size, eh2s_summary *sum,
				 eh2s_error *err);

typedef struct {
	size_t size;           /* eh2s_verify_section_opts_init */
	eh2s_verify_cb on_issue; /* mismatching and extra functions
	                        * (relocatable 0, name NULL) */
	void *cb_ctx;
	int report_missing;    /* call on_issue for missing ones too */
	int report_skipped;    /* ... and for skipped ones, with the reason */
} eh2s_verify_section_opts;

/* Defaults: no callback. */
EH2S_DEFINE_INIT_(eh2s_verify_section_opts)

/* Check the .sframe bytes sframe[0..sframe_size), located at
 * sframe_addr, against the CFI of in at every DWARF row and FRE
 * boundary, as eh2s_verify does for files. o and out may be NULL.
 * EH2S_E_VERIFY when a function mismatches or is extra (*out filled);
 * BAD_SFRAME when the bytes are malformed. */
eh2s_status eh2s_verify_section(const eh2s_cfi_input *in,
				const void *sframe, size_t sframe_size,
				uint64_t sframe_addr,
				const eh2s_verify_section_opts *o,
				eh2s_verify_result *out, eh2s_error *err);

#ifdef __cplusplus
}
#endif

#endif
