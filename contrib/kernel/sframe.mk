# sframe.mk - add .sframe sections to kernel objects and modules with
# eh2sframe, in the spirit of an objtool pass.
#
# The kernel builds with -fno-asynchronous-unwind-tables (and
# -fno-unwind-tables), which leaves no .eh_frame to convert. Objects that
# should get SFrame need
#
#     ccflags-y += -fasynchronous-unwind-tables
#
# (x86-64 keeps its usual -mcmodel=kernel -mno-red-zone -fno-pic; arm64
# its -mgeneral-regs-only and default small code model; both are fine).
# Keep .eh_frame out of the final image if nothing else wants it: the
# linker script's /DISCARD/ can drop .eh_frame once .sframe exists.
#
# Use, in an external module's Kbuild or Makefile:
#
#     include path/to/contrib/kernel/sframe.mk
#     ccflags-y += $(SFRAME_CFLAGS)
#
# and after `make -C $(KDIR) M=$(PWD) modules`:
#
#     make -f path/to/contrib/kernel/sframe.mk sframe-modules M=$(PWD)
#
# which converts every *.ko under M in place (before signing them). For
# single objects the pattern rule turns foo.o into foo.sframe.o:
#
#     make -f path/to/contrib/kernel/sframe.mk foo.sframe.o
#
# Inside a kernel tree, the same command can run where objtool runs
# (scripts/Makefile.build, after cmd_objtool):
#
#     cmd_sframe = $(EH2SFRAME) --in-place --no-sync -q $@
#
# (--no-sync: kernel objects and modules are build products, made again
# by the next make; syncing each would cost one fsync per object.)
#
# Relocatable output has one .sframe (+ .rela.sframe, R_X86_64_PC64 /
# R_AARCH64_PREL64 / R_390_PC64) per COMDAT group; `ld -r` concatenates
# them. GNU ld releases without SFrame V3 support print "error in
# foo.o(.sframe); no .sframe will be created" on V3 input but keep the
# concatenated sections in -r output (eh2sframe --verify checks it).
# A kernel SFrame reader takes one header per section, so for modules
# convert the linked .ko (sframe-modules), not the objects it is made of;
# contrib/kernel/sframe_kcheck.c reports a concatenated section.
#
# Debian's kernels build with debug info: without SFRAME_CFLAGS the
# objects still have .debug_frame (the same CFI), which eh2sframe reads
# when .eh_frame is absent. Convert before INSTALL_MOD_STRIP removes it:
# `make modules_install INSTALL_MOD_STRIP=1` then strips the converted
# module (strip --strip-debug keeps .sframe and .rela.sframe), and debug
# copies taken from the converted module match the installed one.

EH2SFRAME ?= eh2sframe
SFRAME_CFLAGS := -fasynchronous-unwind-tables
M ?= .

%.sframe.o: %.o
	$(EH2SFRAME) -q $< -o $@

.PHONY: sframe-modules
sframe-modules:
	find $(M) -name '*.ko' -type f | $(EH2SFRAME) --in-place --no-sync --files-from -
