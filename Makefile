# eh2sframe — see README.md. Sources are found by wildcard: a new .c file
# under src/<module>/ joins the library, tests/unit/test_*.c each become a
# unit test, tests/e2e/*.sh each an end-to-end test.
CC ?= gcc
ifeq ($(origin CC),default)
CC := gcc
endif
PREFIX ?= /usr/local
BUILD ?= build
WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
BASE_CFLAGS := -std=c11 -D_GNU_SOURCE -g $(WARN) -Iinclude -Isrc
CFLAGS ?= -O2
# zlib inflates compressed sections (src/elf/elf_file.c); liblzma
# reads and writes the xz-compressed mini debuginfo (src/common/xz.c).
# libelf is only the unit tests' independent reader of what the library
# writes.
LDLIBS := -lz -llzma
TEST_LDLIBS := $(LDLIBS) -lelf

MODULES := common abi dwarf sframe elf elfpatch convert verify api
LIB_SRCS := $(foreach m,$(MODULES),$(sort $(wildcard src/$(m)/*.c)))
CLI_SRCS := $(sort $(wildcard src/cli/*.c))
UNIT_SRCS := $(sort $(wildcard tests/unit/test_*.c))

LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/%.o)
CLI_OBJS := $(CLI_SRCS:%.c=$(BUILD)/%.o)

ASAN := $(BUILD)/asan
ASAN_FLAGS := -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
ASAN_LIB_OBJS := $(LIB_SRCS:%.c=$(ASAN)/%.o)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(ASAN)/unit/%)

.PHONY: all deps check unit e2e demo clean oracle fuzz fuzz-build replay nocache clang-check install bench corpus-check check-distro check-system size-check abi-check abi-update

PROG ?= eh2sframe

all: $(PROG) $(BUILD)/libeh2sframe.a $(BUILD)/libeh2sframe-internal.a

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

# The static library is one prelinked object in which only the public
# API (eh2s_*) stays global: the modules' own names (cfi_*, sfe_*, elfp_*,
# ...) become local, so they cannot collide with the names of the
# program that links it (tests/e2e/lib_symbols.sh checks with nm).
OBJCOPY ?= objcopy
$(BUILD)/libeh2sframe.a: $(LIB_OBJS)
	@rm -f $@
	@mkdir -p $(BUILD)/prelink
	$(CC) -r -nostdlib -o $(BUILD)/prelink/libeh2sframe.o $^
	$(OBJCOPY) --wildcard --keep-global-symbol='eh2s_*' \
		$(BUILD)/prelink/libeh2sframe.o
	ar rcs $@ $(BUILD)/prelink/libeh2sframe.o

libeh2sframe.a: $(BUILD)/libeh2sframe.a
	cp $< $@

# Every object with its names global, for what reaches the internals
# through src/*/ headers: the command (its hidden developer mode calls
# src/api/api_dev.h), test and benchmark programs. Not installed.
$(BUILD)/libeh2sframe-internal.a: $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(PROG): $(CLI_OBJS) $(BUILD)/libeh2sframe-internal.a
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -o $@ $(CLI_OBJS) $(BUILD)/libeh2sframe-internal.a $(LDLIBS)

# Sanitizer build of the library for unit tests.
$(ASAN)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(ASAN_FLAGS) -MMD -MP -c $< -o $@

$(ASAN)/libeh2sframe.a: $(ASAN_LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(ASAN)/unit/%: tests/unit/%.c $(wildcard tests/unit/*.h) $(ASAN)/libeh2sframe.a
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(ASAN_FLAGS) -Itests/unit -o $@ $< $(ASAN)/libeh2sframe.a $(TEST_LDLIBS)

deps:
	@bash tools/install-deps.sh

unit: $(UNIT_BINS)

# The test run: unit tests under ASan+UBSan, then end-to-end scripts.
# Ends with "N passed, N failed".
check: deps
	@$(MAKE) --no-print-directory all unit replay nocache
	@bash tests/run.sh $(UNIT_BINS)

# The command with the projection's caches compiled out (-DEH2S_NO_CACHE,
# src/convert/conv_cache.h), in build/nocache/ apart from the normal build:
# tests/e2e/cache_off.sh requires the same bytes from both.
nocache:
	@$(MAKE) --no-print-directory BUILD=build/nocache PROG=build/nocache/eh2sframe \
		CFLAGS="$(CFLAGS) -DEH2S_NO_CACHE" build/nocache/eh2sframe

# Each script of tests/$(1)/: exit 0 passes, 77 skips, anything else
# fails; ends with "N passed, N failed, N skipped".
run_scripts = pass=0; fail=0; skip=0; \
	for t in tests/$(1)/*.sh; do \
		echo "=== $(1)/$$(basename $$t .sh)"; s=$$(date +%s); \
		bash $$t; rc=$$?; \
		if [ $$rc = 0 ]; then pass=$$((pass + 1)); echo "--- PASS $$t ($$(( $$(date +%s) - s ))s)"; \
		elif [ $$rc = 77 ]; then skip=$$((skip + 1)); echo "--- SKIP $$t"; \
		else fail=$$((fail + 1)); echo "--- FAIL $$t (exit $$rc)"; fi; \
	done; \
	echo "$$pass passed, $$fail failed, $$skip skipped"; [ $$fail = 0 ]

# Real-distribution tests (tests/distro/*.sh): rebuild a Debian source
# package with the dh-sframe addon and check every file it ships. Needs
# root and the Debian archive (deb-src); several minutes. CI runs it
# after `make check`. Ends with "N passed, N failed, N skipped".
check-distro:
	@bash tools/install-deps.sh --distro
	@$(MAKE) --no-print-directory all
	@$(call run_scripts,distro)

# A whole system (tests/system/*.sh): a Debian 12 root with python3, perl,
# gcc, gdb, git, coreutils and openssl (tools/make-sysroot.sh, cached in
# cache/sysroot/bookworm) copied and converted in one run with its debug
# files, every file verified, and a fixed workload run in both roots. Needs
# root and the Debian archive; CI runs it after `make check-distro`. Ends
# with "N passed, N failed, N skipped".
check-system:
	@bash tools/install-deps.sh
	@bash tools/make-sysroot.sh
	@$(MAKE) --no-print-directory all
	@$(call run_scripts,system)

demo: deps
	@$(MAKE) --no-print-directory all
	@bash tools/demo.sh

# Whole-system run: convert + verify every ELF file with CFI under /usr and
# a fixed list of arm64/s390x Debian packages (tools/corpus-check.sh).
corpus-check: deps
	@$(MAKE) --no-print-directory all
	@bash tools/corpus-check.sh

# Size on disk over all of /usr/bin and every arm64/s390x package program
# (make check takes a fixed sample): tests/e2e/size_*.sh with SIZE_ALL=1.
size-check: deps
	@$(MAKE) --no-print-directory all
	@SIZE_ALL=1 bash tests/e2e/size_usrbin.sh && SIZE_ALL=1 bash tests/e2e/size_cross.sh

bench: deps
	@$(MAKE) --no-print-directory all
	@bash bench/run.sh

oracle:
	@bash tools/make-oracle.sh

# Fuzzing: libFuzzer targets tests/fuzz/fuzz_*.c built with clang and
# ASan+UBSan; `make fuzz FUZZ_SECONDS=N` runs each for N seconds, seeded
# from tests/fuzz/seeds/<target>/ and real binaries (tests/fuzz/run.sh).
FUZZ := $(BUILD)/fuzz
FUZZ_SRCS := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BINS := $(FUZZ_SRCS:tests/fuzz/%.c=$(FUZZ)/%)
REPLAY_BINS := $(FUZZ_SRCS:tests/fuzz/%.c=$(ASAN)/replay/%)
FUZZ_SECONDS ?= 300
FUZZ_LIB_OBJS := $(LIB_SRCS:%.c=$(FUZZ)/%.o)

$(FUZZ)/%.o: %.c
	@mkdir -p $(dir $@)
	clang $(BASE_CFLAGS) -O1 -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -MMD -MP -c $< -o $@

$(FUZZ)/libeh2sframe.a: $(FUZZ_LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(FUZZ)/fuzz_%: tests/fuzz/fuzz_%.c $(wildcard tests/fuzz/*.h) $(FUZZ)/libeh2sframe.a
	clang $(BASE_CFLAGS) -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -o $@ $< $(FUZZ)/libeh2sframe.a $(LDLIBS)

# The same targets without libFuzzer: replay a corpus (regression tests).
$(ASAN)/replay/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/replay.c $(wildcard tests/fuzz/*.h) $(ASAN)/libeh2sframe.a
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(ASAN_FLAGS) -o $@ $< tests/fuzz/replay.c $(ASAN)/libeh2sframe.a $(LDLIBS)

fuzz-build: $(FUZZ_BINS)

fuzz: deps
	@$(MAKE) --no-print-directory fuzz-build
	@bash tests/fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_BINS)

replay: $(REPLAY_BINS)

# Warning check with clang; its program goes to build/clang/, not ./eh2sframe.
clang-check:
	$(MAKE) --no-print-directory BUILD=build/clang CC=clang PROG=build/clang/eh2sframe all

clean:
	rm -rf $(BUILD) eh2sframe libeh2sframe.a

# ---- Public library (include/eh2sframe.h, src/api): shared + static,
# pkg-config file, install/uninstall.
# The one version is the header's EH2S_VERSION_*; its MAJOR is the ABI
# number, the soname's (README, "Embedding the library").
version_part = $(shell sed -n 's/^\#define EH2S_VERSION_$(1) \([0-9][0-9]*\)$$/\1/p' include/eh2sframe.h)
SOVERSION := $(call version_part,MAJOR)
LIBVERSION := $(SOVERSION).$(call version_part,MINOR).$(call version_part,PATCH)
PIC := $(BUILD)/pic
PIC_OBJS := $(LIB_SRCS:%.c=$(PIC)/%.o)
SONAME := libeh2sframe.so.$(SOVERSION)
SOLIB := $(BUILD)/libeh2sframe.so.$(LIBVERSION)

all: $(BUILD)/libeh2sframe.so

$(PIC)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -fPIC -MMD -MP -c $< -o $@

$(SOLIB): $(PIC_OBJS) src/api/libeh2sframe.map
	$(CC) $(CFLAGS) -shared -Wl,-soname,$(SONAME) -Wl,-z,defs \
		-Wl,--version-script=src/api/libeh2sframe.map -o $@ $(PIC_OBJS) $(LDLIBS)

$(BUILD)/$(SONAME): $(SOLIB)
	ln -sf $(notdir $<) $@

$(BUILD)/libeh2sframe.so: $(BUILD)/$(SONAME)
	ln -sf $(notdir $<) $@

DESTDIR ?=
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(PKGCONFIGDIR)
	install -m 755 $(PROG) $(DESTDIR)$(BINDIR)/eh2sframe
	install -m 644 $(BUILD)/libeh2sframe.a $(DESTDIR)$(LIBDIR)/libeh2sframe.a
	install -m 755 $(SOLIB) $(DESTDIR)$(LIBDIR)/libeh2sframe.so.$(LIBVERSION)
	ln -sf libeh2sframe.so.$(LIBVERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libeh2sframe.so
	install -m 644 include/eh2sframe.h $(DESTDIR)$(INCLUDEDIR)/eh2sframe.h
	install -m 644 doc/eh2sframe.1 $(DESTDIR)$(MANDIR)/man1/eh2sframe.1
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
		-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(LIBVERSION)|' \
		eh2sframe.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/eh2sframe.pc
	chmod 644 $(DESTDIR)$(PKGCONFIGDIR)/eh2sframe.pc

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/eh2sframe $(DESTDIR)$(LIBDIR)/libeh2sframe.a \
		$(DESTDIR)$(LIBDIR)/libeh2sframe.so.$(LIBVERSION) \
		$(DESTDIR)$(LIBDIR)/$(SONAME) $(DESTDIR)$(LIBDIR)/libeh2sframe.so \
		$(DESTDIR)$(INCLUDEDIR)/eh2sframe.h $(DESTDIR)$(MANDIR)/man1/eh2sframe.1 \
		$(DESTDIR)$(PKGCONFIGDIR)/eh2sframe.pc

.PHONY: uninstall

# ---- ABI baseline: abi/libeh2sframe.abi is abidw's description of the
# shared library's public interface (types reachable from
# include/eh2sframe.h) and of the libraries it needs (<elf-needed>, its
# DT_NEEDED). `make check` compares the built library with it
# (tests/e2e/lib_abi.sh: abidiff, and readelf -d for DT_NEEDED, which
# abidiff ignores); any difference fails. A deliberate
# change to the interface runs `make abi-update` and commits the new
# baseline together with the change.
ABI_BASELINE := abi/libeh2sframe.abi
ABIDW_FLAGS := --headers-dir include --no-corpus-path --no-comp-dir-path \
	--no-show-locs --type-id-style hash --drop-undefined-syms \
	--drop-private-types

abi-check: all
	@bash tests/e2e/lib_abi.sh

abi-update: all
	@mkdir -p $(dir $(ABI_BASELINE))
	abidw $(ABIDW_FLAGS) --out-file $(ABI_BASELINE) $(SOLIB)
	@echo "$(ABI_BASELINE) updated: commit it with the interface change"

abidw-flags:
	@echo $(ABIDW_FLAGS)

.PHONY: abidw-flags
-include $(PIC_OBJS:.o=.d)

-include $(LIB_OBJS:.o=.d) $(CLI_OBJS:.o=.d) $(ASAN_LIB_OBJS:.o=.d) $(FUZZ_LIB_OBJS:.o=.d)
