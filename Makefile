# SPDX-License-Identifier: GPL-2.0-only
#
# mrrc: top-level build.  `make help` lists the targets.
#
# Kernel builds run per kernel version in build/kmod/<kver>/ (a copy of
# Kbuild, kmod/ and uapi/), so 6.1 and 6.12 builds never clobber each
# other and the source tree stays clean.  DKMS uses Kbuild directly.

ifneq ($(KERNELRELEASE),)
include $(src)/Kbuild
else

SHELL := /bin/bash
TOP := $(CURDIR)
B := $(TOP)/build

# Debian kernels installed on this machine, oldest first.  KVER defaults to
# the newest; the host's own kernel is never used.  The debug guest kernel
# (tools/vm/debug-kernel.sh) is not in the list: KVER=debug names it.
# Everything that needs the kernels re-enters make after `deps` (see
# DEPS_FIRST below), because this list is read when make starts.
KVERS := $(shell cd /lib/modules 2>/dev/null && \
	for v in *; do [ -f $$v/build/Makefile ] && [ -f /boot/vmlinuz-$$v ] && echo $$v; done | \
	grep -v -- '-mrrc-dbg-' | sort -V)
KVER ?= $(lastword $(KVERS))
ifeq ($(KVER),debug)
DEBUG_KERNEL := debug-kernel
override KVER := $(shell $(CURDIR)/tools/vm/debug-kernel.sh --release 2>/dev/null)
endif
KDIR = /lib/modules/$(KVER)/build

# The one version of everything (module, library, tool, dkms.conf, man
# pages): the file VERSION.  The library's file name follows it: minor
# versions add symbols (lib/libmrrc.map), the soname changes only with
# LIB_MAJOR.
VERSION := $(shell cat $(TOP)/VERSION)
VERSION_PARTS := $(subst ., ,$(VERSION))
LIB_MAJOR := 0
LIB_VERSION := $(LIB_MAJOR).$(word 2,$(VERSION_PARTS)).$(word 3,$(VERSION_PARTS))

# The standard variables are honoured (CFLAGS, CPPFLAGS, LDFLAGS, CC);
# warnings are errors only with WERROR=1, which `make check` sets.
CC ?= cc
CFLAGS ?= -O2 -g
WERROR ?=
WARN_CFLAGS := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
	$(if $(filter 1,$(WERROR)),-Werror)
USER_CFLAGS := -std=gnu11 $(WARN_CFLAGS) -D_GNU_SOURCE \
	-I$(TOP)/uapi -I$(TOP)/lib -I$(B)/include/mrrc $(CPPFLAGS) $(CFLAGS) \
	$(EXTRA_CFLAGS)
USER_LDFLAGS := $(LDFLAGS)
HARNESS_INC := -I$(B)/linux-tools/tools/testing/selftests

PREFIX ?= /usr/local
DESTDIR ?=
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
DOCDIR ?= $(PREFIX)/share/doc/mrrc
DKMS_SRC ?= /usr/src/mrrc-$(VERSION)

LIB_SRCS := lib/libmrrc.c lib/frrwp.c lib/strings.c
LIB_OBJS := $(patsubst lib/%.c,$(B)/lib/%.o,$(LIB_SRCS))
# The shared library's own objects: with its old symbol versions.
LIB_SO_OBJS := $(patsubst lib/%.c,$(B)/lib/so/%.o,$(LIB_SRCS))
VERSION_H := $(B)/include/mrrc/mrrc_version.h
# Everything userspace is rebuilt when the compiler flags change.
CFLAGS_STAMP := $(B)/.user-cflags
LIB_HDRS := lib/libmrrc.h lib/mark_defined.h uapi/mrrc_abi.h $(VERSION_H) $(CFLAGS_STAMP)
TOOL_SRCS := tools/mrrc/main.c tools/mrrc/cli.c tools/mrrc/info.c tools/mrrc/fmt.c \
	tools/mrrc/stat.c tools/mrrc/ctx.c tools/mrrc/blk.c
TOOL_HDRS := tools/mrrc/mrrc_tool.h
SELFTESTS := $(patsubst selftests/%.c,$(B)/selftests/%,$(wildcard selftests/mrrc_*.c))
TESTS_DIR ?= $(B)/tests
UNIT_TESTS := $(TESTS_DIR)/test_libmrrc $(TESTS_DIR)/test_mrrc_tool \
	$(TESTS_DIR)/test_replay $(TESTS_DIR)/test_abi_compat \
	$(TESTS_DIR)/test_costfit
BENCHES := $(B)/bench-bin/mrrc_ops \
	$(patsubst tools/bench/%.c,$(B)/bench-bin/%,$(wildcard tools/bench/bench_*.c)) \
	$(patsubst tools/bench/%.sh,$(B)/bench-bin/%,$(wildcard tools/bench/bench_*.sh))
KMOD_SRCS := Kbuild VERSION $(wildcard kmod/*.c kmod/*.h kmod/blk/*.c kmod/blk/*.h) \
	uapi/mrrc_abi.h \
	$(wildcard selftests/ktest/*.c)

.PHONY: all deps module modules-all lib tools selftests unit-tests initramfs \
	vm vm-pair kv-pair run check check-full check-fresh bench benches fuzz debug-kernel \
	examples no-module install-lib install uninstall dkms-install clean help \
	print-kvers print-version docs bench-tables FORCE \
	$(addprefix do-,$(DEPS_FIRST))

# Plain `make` installs nothing: the selftests (which need the kselftest
# harness from `make deps`) are built by the targets that run them, the
# module only when a kernel's headers are there.
all: $(if $(KVER),module,no-module) lib tools examples

no-module:
	@echo "make: no Debian kernel headers installed; the module is not built (make deps installs them)"

$(VERSION_H): lib/mrrc_version.h.in VERSION
	@mkdir -p $(@D)
	sed -e 's|@MAJOR@|$(word 1,$(VERSION_PARTS))|' \
	    -e 's|@MINOR@|$(word 2,$(VERSION_PARTS))|' \
	    -e 's|@PATCH@|$(word 3,$(VERSION_PARTS))|' \
	    -e 's|@VERSION@|$(VERSION)|' $< > $@

$(CFLAGS_STAMP): FORCE
	@mkdir -p $(@D)
	@echo '$(CC) $(USER_CFLAGS) $(USER_LDFLAGS)' | cmp -s - $@ || \
		echo '$(CC) $(USER_CFLAGS) $(USER_LDFLAGS)' > $@

FORCE:

help:
	@echo "make run            build everything and show the devices in the test VM"
	@echo "make check          every test; last line 'N passed, N failed'"
	@echo "make vm CMD='...'   run CMD in a fresh test VM (KVER=$(KVER))"
	@echo "make vm-pair        two VMs on a link: the remote selftests (KVER_A=, KVER_B=, CMD_A=, CMD_B=)"
	@echo "make kv-pair        mrrcd in one VM, its clients in the other, a daemon crash between"
	@echo "make bench [BENCH=name]  benchmarks in the VM -> build/bench/<name>.jsonl"
	@echo "make check-full     make check plus the two-VM suites and a longer fuzz run on the debug kernel"
	@echo "make check-fresh    the README's two commands in a fresh debootstrap root"
	@echo "make docs           Documentation as HTML with figures -> build/doc/"
	@echo "make bench-tables   the pages' measured tables from Documentation/data/"
	@echo "make fuzz [SECONDS=60 SEED=1 FUZZ_KVER=debug]  the ioctl fuzzer in the VM"
	@echo "make debug-kernel   build the debug guest kernel (cached in /var/cache/mrrc)"
	@echo "make deps           install Debian packages, extract harness/checkpatch"
	@echo "make install PREFIX=/usr DESTDIR=  library, headers, tool, man pages"
	@echo "installed kernels: $(KVERS)"

deps:
	@$(TOP)/tools/deps.sh $(B)

# ---- kernel module -------------------------------------------------------

$(B)/kmod/%/mrrc.ko: $(KMOD_SRCS)
	@mkdir -p $(B)/kmod/$*/selftests
	@cp -a Kbuild VERSION kmod uapi $(B)/kmod/$*/
	@cp -a selftests/ktest $(B)/kmod/$*/selftests/
	$(MAKE) -C /lib/modules/$*/build M=$(B)/kmod/$* W=1 MRRC_KTEST=m modules

module: $(B)/kmod/$(KVER)/mrrc.ko
modules-all: $(foreach v,$(KVERS),$(B)/kmod/$(v)/mrrc.ko)

# ---- libmrrc --------------------------------------------------------------

$(B)/lib/%.o: lib/%.c $(LIB_HDRS) lib/libmrrc.map
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -fPIC -fvisibility=hidden -c -o $@ $<

$(B)/lib/so/%.o: lib/%.c $(LIB_HDRS) lib/libmrrc.map
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -fPIC -fvisibility=hidden -DMRRC_SHARED -c -o $@ $<

$(B)/lib/libmrrc.so.$(LIB_VERSION): $(LIB_SO_OBJS) lib/libmrrc.map
	rm -f $(B)/lib/libmrrc.so.$(LIB_MAJOR).*
	$(CC) $(USER_LDFLAGS) -shared -Wl,-soname,libmrrc.so.$(LIB_MAJOR) \
		-Wl,--version-script=lib/libmrrc.map -o $@ $(LIB_SO_OBJS)
	ln -sf libmrrc.so.$(LIB_VERSION) $(B)/lib/libmrrc.so.$(LIB_MAJOR)
	ln -sf libmrrc.so.$(LIB_MAJOR) $(B)/lib/libmrrc.so

$(B)/lib/libmrrc.a: $(LIB_OBJS)
	rm -f $@
	ar rcs $@ $^

lib: $(B)/lib/libmrrc.so.$(LIB_VERSION) $(B)/lib/libmrrc.a

# ---- tools ----------------------------------------------------------------

$(B)/tools/mrrc: $(TOOL_SRCS) $(TOOL_HDRS) $(B)/lib/libmrrc.a
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) $(USER_LDFLAGS) -o $@ $(TOOL_SRCS) $(B)/lib/libmrrc.a

# What the benchmarks and mrrc-replay share: -d DEV, strict numbers, JSON.
BENCHJSON := tools/bench/benchjson.c tools/bench/benchjson.h
BENCHCONN := tools/bench/benchconn.c tools/bench/benchconn.h

REPLAY_SRCS := tools/replay/main.c tools/replay/trace.c tools/replay/replay.c \
	tools/replay/refsim.c tools/bench/benchjson.c
$(B)/tools/mrrc-replay: $(REPLAY_SRCS) tools/replay/replay.h $(BENCHJSON) $(LIB_HDRS) $(B)/lib/libmrrc.a
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) $(USER_LDFLAGS) -Itools/replay -Itools/bench -o $@ $(REPLAY_SRCS) $(B)/lib/libmrrc.a -lm

# ---- fuzzer (tools/fuzz/) ----
FUZZ_SRCS := $(wildcard tools/fuzz/*.c)
FUZZ_HDRS := $(wildcard tools/fuzz/*.h)
$(B)/tools/mrrc_fuzz: $(FUZZ_SRCS) $(FUZZ_HDRS) $(LIB_HDRS) $(B)/lib/libmrrc.a
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) $(USER_LDFLAGS) -Itools/fuzz -o $@ $(FUZZ_SRCS) $(B)/lib/libmrrc.a -lpthread

tools: $(B)/tools/mrrc $(B)/tools/mrrc-replay $(if $(FUZZ_SRCS),$(B)/tools/mrrc_fuzz)
include tools/mrrcd/mrrcd.mk
include tools/redy/redy.mk
include tools/bm/bm.mk

# ---- examples (examples/), also installed as documentation ----
# Built as a user builds them: against `make install-lib PREFIX=/usr` in a
# staging root, with the flags pkg-config gives.
STAGE := $(B)/stage
STAGE_PC = PKG_CONFIG_SYSROOT_DIR=$(STAGE) PKG_CONFIG_LIBDIR=$(STAGE)/usr/lib/pkgconfig \
	pkg-config
$(STAGE)/.stamp: $(B)/lib/libmrrc.so.$(LIB_VERSION) $(B)/lib/libmrrc.a $(LIB_HDRS) \
		lib/libmrrc.pc.in $(wildcard lib/man3/*.3)
	rm -rf $(STAGE)
	$(MAKE) --no-print-directory -s install-lib DESTDIR=$(STAGE) PREFIX=/usr
	touch $@

EXAMPLES := $(patsubst examples/%.c,$(B)/examples/%,$(wildcard examples/*.c))
$(B)/examples/%: examples/%.c examples/example.h $(STAGE)/.stamp
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN_CFLAGS) $(USER_LDFLAGS) -o $@ $< \
		$$($(STAGE_PC) --cflags --libs $(or $(EXAMPLE_PC),libmrrc)) \
		-Wl,-rpath,$(STAGE)/usr/lib

examples: $(EXAMPLES)

$(B)/bench-bin/%: tools/bench/%.c $(BENCHJSON) $(BENCHCONN) $(LIB_HDRS) $(B)/lib/libmrrc.a
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) $(USER_LDFLAGS) -o $@ $< tools/bench/benchjson.c \
		tools/bench/benchconn.c $(B)/lib/libmrrc.a

$(B)/bench-bin/%: tools/bench/%.sh
	@mkdir -p $(@D)
	install -m 755 $< $@

# BENCH=peers measures UCX too: Debian's libucx-dev (tools/deps.sh).
$(B)/bench-bin/bench_peers: tools/bench/bench_peers.c $(BENCHJSON) $(BENCHCONN) $(LIB_HDRS) $(B)/lib/libmrrc.a
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) $(USER_LDFLAGS) -o $@ $< tools/bench/benchjson.c \
		tools/bench/benchconn.c $(B)/lib/libmrrc.a -lucp -lucs

benches: $(BENCHES)

# ---- tests ----------------------------------------------------------------

# The hostile peer of the two-VM tests speaks verbs itself.
$(B)/selftests/mrrc_hostile: SELFTEST_LIBS := -lrdmacm -libverbs
$(B)/selftests/%: selftests/%.c selftests/mrrc_test.h selftests/mrrc_dp_test.h selftests/mrrc_pair.h $(LIB_HDRS) $(B)/lib/libmrrc.a | deps
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) $(USER_LDFLAGS) $(HARNESS_INC) -Wno-missing-prototypes -Wno-sign-compare -Wno-unused-parameter -o $@ $< \
		$(B)/lib/libmrrc.a -lpthread $(SELFTEST_LIBS)

selftests: $(SELFTESTS)

# Host unit tests: the library and the tool with ioctl() behind ld --wrap.
WRAP := -Wl,--wrap=ioctl -Wl,--wrap=open
$(TESTS_DIR)/test_libmrrc: lib/tests/test_libmrrc.c $(LIB_SRCS) $(LIB_HDRS)
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) $(USER_LDFLAGS) $(TEST_CFLAGS) -o $@ $< $(LIB_SRCS) $(WRAP) -lcmocka

# Linked against the shared library, to reach its old symbol versions.
$(TESTS_DIR)/test_abi_compat: lib/tests/test_abi_compat.c $(B)/lib/libmrrc.so.$(LIB_VERSION)
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) $(USER_LDFLAGS) $(TEST_CFLAGS) -o $@ $< -L$(B)/lib -lmrrc \
		-Wl,-rpath,$(abspath $(B)/lib) -lcmocka

$(TESTS_DIR)/test_mrrc_tool: tools/tests/test_mrrc_tool.c $(TOOL_SRCS) $(TOOL_HDRS) $(LIB_SRCS) $(LIB_HDRS)
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) $(USER_LDFLAGS) $(TEST_CFLAGS) -Itools/mrrc -o $@ $< \
		$(filter-out tools/mrrc/main.c,$(TOOL_SRCS)) $(LIB_SRCS) $(WRAP) -lcmocka

$(TESTS_DIR)/test_replay: tools/tests/test_replay.c tools/replay/trace.c tools/replay/refsim.c tools/replay/replay.h $(BENCHJSON) $(LIB_HDRS)
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) $(USER_LDFLAGS) $(TEST_CFLAGS) -Itools/replay -Itools/bench -o $@ $< \
		tools/replay/trace.c tools/replay/refsim.c tools/bench/benchjson.c -lcmocka -lm

# The module's cost fit (kmod/costfit.h), on the host.
$(TESTS_DIR)/test_costfit: tools/tests/test_costfit.c kmod/costfit.h
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) $(USER_LDFLAGS) $(TEST_CFLAGS) -o $@ $< -lcmocka

unit-tests: $(UNIT_TESTS)

# ---- test VM --------------------------------------------------------------

$(B)/vm/initramfs-%.cpio.gz: tools/vm/mkinitramfs.sh tools/vm/init
	@mkdir -p $(@D)
	tools/vm/mkinitramfs.sh $* $@

initramfs: $(B)/vm/initramfs-$(KVER).cpio.gz

# The user-facing targets below install the dependencies (and, for
# KVER=debug, the debug kernel) first, then re-enter make so that kernels
# installed a moment ago are seen: a fresh machine needs one `make run`.
DEPS_FIRST := vm vm-pair run check check-full bench fuzz
$(DEPS_FIRST): deps $(DEBUG_KERNEL)
	@$(MAKE) --no-print-directory do-$@

debug-kernel: deps
	@$(TOP)/tools/vm/debug-kernel.sh > /dev/null

# A kernel name, with "debug" meaning the debug kernel.
kver = $(if $(filter debug,$(1)),$(shell $(TOP)/tools/vm/debug-kernel.sh --release),$(1))

do-vm:
	@[ -n "$(KVER)" ] || { echo "vm: no guest kernel (KVER=$(KVER))"; exit 1; }
	@$(MAKE) --no-print-directory -s all selftests benches initramfs KVER=$(KVER) > $(B)/vm-build.log 2>&1 || \
		{ cat $(B)/vm-build.log; exit 1; }
	@tools/vm/run.sh $(KVER) '$(CMD)'

# Two VMs on a virtual link, each with its own kernel and module: by
# default the hostile peer's selftests and the remote ones, served by A (oldest
# kernel) to B (newest).
KVER_A ?= $(firstword $(KVERS))
KVER_B ?= $(lastword $(KVERS))
CMD_A ?= build/selftests/mrrc_hostile serve; build/selftests/mrrc_remote serve
CMD_B ?= build/selftests/mrrc_hostile; st=$$?; build/selftests/mrrc_remote || st=1; exit $$st
do-vm-pair:
	@for k in $(sort $(call kver,$(KVER_A)) $(call kver,$(KVER_B))); do \
		$(MAKE) --no-print-directory -s all selftests benches initramfs KVER=$$k > $(B)/vm-build.log 2>&1 || \
			{ cat $(B)/vm-build.log; exit 1; }; \
	done
	@tools/vm/pair.sh $(call kver,$(KVER_A)) $(call kver,$(KVER_B)) '$(CMD_A)' '$(CMD_B)'

# mrrcd between two VMs: the daemon in A, the clients in B, a crash and
# restart of the daemon in the middle (tools/mrrcd/tests/kv_pair.sh).
kv-pair:
	@$(MAKE) --no-print-directory vm-pair \
		CMD_A='tools/mrrcd/tests/kv_pair.sh serve' \
		CMD_B='tools/mrrcd/tests/kv_pair.sh client $(B)/kv-pair'

do-run:
	@$(MAKE) --no-print-directory do-vm CMD='tools/vm/demo.sh'

do-check:
	@tools/check.sh

# Everything of `make check`, plus the two-VM suites and a longer fuzz run
# on the debug kernel.
do-check-full:
	@MRRC_CHECK_FULL=1 tools/check.sh

print-kvers:
	@echo $(KVERS)

BENCH ?= all
do-bench:
	@$(MAKE) --no-print-directory -s all selftests benches initramfs KVER=$(KVER)
	@tools/bench/run.sh $(KVER) $(BENCH)

# The ioctl fuzzer (tools/fuzz/), by default on the debug kernel.  Exits
# non-zero on any finding: a splat, a leak, a hang, pinned pages left.
SECONDS ?= 60
SEED ?= 1
FUZZ_KVER ?= debug
do-fuzz:
	@$(MAKE) --no-print-directory -s debug-kernel
	@$(MAKE) --no-print-directory do-vm KVER=$(FUZZ_KVER) \
		CMD='tools/fuzz/run.sh $(SECONDS) $(SEED) $(B)/fuzz'

# Proves the README: a minimal Debian root made with debootstrap, a clone
# of this repository's HEAD in it, and `make run` and `make check` there.
check-fresh:
	@tools/check-fresh.sh

# ---- documentation ---------------------------------------------------------

# Documentation/*.rst as HTML in build/doc/, with the figures drawn from the
# measured data in Documentation/data/ (tools/bench/plot-bench.sh, and
# tools/bench/plot-trace.sh for the trace evaluation's).  The figures are
# build products, never committed.
DOC_RST := $(filter-out Documentation/index.rst,$(wildcard Documentation/*.rst))
docs:
	@mkdir -p $(B)/doc/figures
	@tools/bench/plot-bench.sh Documentation/data $(B)/doc/figures > /dev/null
	@tools/bench/plot-trace.sh Documentation/data/trace.jsonl $(B)/doc/figures > /dev/null
	@for f in $(DOC_RST); do \
		python3 -m docutils --halt=warning $$f $(B)/doc/$$(basename $$f .rst).html || exit 1; \
	done
	@echo "docs: $(B)/doc/*.html, figures in $(B)/doc/figures/"

# The tables of benchmarks.rst, rewritten from Documentation/data/*.jsonl
# (copy build/bench/<name>.jsonl there after `make bench` to update them).
bench-tables:
	@tools/bench/bench-tables.py
	@tools/bench/bench-tables.py Documentation/redy.rst
	@tools/bench/bench-tables.py Documentation/bm.rst
	@tools/bench/bench-tables.py Documentation/evaluation.rst

# ---- install --------------------------------------------------------------

# The library as a user gets it: shared and static library, headers in
# $(INCLUDEDIR)/mrrc/ (programs include <mrrc/libmrrc.h>), libmrrc.pc
# written for these PREFIX/LIBDIR/INCLUDEDIR, the man pages of section 3.
install-lib: lib $(VERSION_H)
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR)/mrrc \
		$(DESTDIR)$(MANDIR)/man3
	install -m 644 $(B)/lib/libmrrc.so.$(LIB_VERSION) $(B)/lib/libmrrc.a $(DESTDIR)$(LIBDIR)/
	ln -sf libmrrc.so.$(LIB_VERSION) $(DESTDIR)$(LIBDIR)/libmrrc.so.$(LIB_MAJOR)
	ln -sf libmrrc.so.$(LIB_MAJOR) $(DESTDIR)$(LIBDIR)/libmrrc.so
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	    -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' \
	    lib/libmrrc.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/libmrrc.pc
	install -m 644 lib/libmrrc.h uapi/mrrc_abi.h $(VERSION_H) $(DESTDIR)$(INCLUDEDIR)/mrrc/
	for m in lib/man3/*.3; do $(call man_install,$$m,$(DESTDIR)$(MANDIR)/man3); done

# A man page with the version of VERSION in its title line.
man_install = sed 's|"mrrc @VERSION@"|"mrrc $(VERSION)"|' $(1) > $(2)/$$(basename $(1))

install: install-lib tools
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man4 \
		$(DESTDIR)$(MANDIR)/man8
	install -m 755 $(B)/tools/mrrc $(B)/tools/mrrc-replay $(DESTDIR)$(BINDIR)/
	$(call man_install,tools/replay/mrrc-replay.1,$(DESTDIR)$(MANDIR)/man1)
	$(call man_install,tools/mrrc/mrrc.8,$(DESTDIR)$(MANDIR)/man8)
	$(call man_install,tools/blk/mrrc_blk.4,$(DESTDIR)$(MANDIR)/man4)
	install -d $(DESTDIR)$(DOCDIR)/examples
	install -m 644 examples/*.c examples/*.h $(DESTDIR)$(DOCDIR)/examples/

uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/libmrrc.* $(DESTDIR)$(LIBDIR)/pkgconfig/libmrrc.pc
	rm -rf $(DESTDIR)$(INCLUDEDIR)/mrrc
	rm -f $(DESTDIR)$(BINDIR)/mrrc $(DESTDIR)$(MANDIR)/man8/mrrc.8
	rm -f $(DESTDIR)$(MANDIR)/man4/mrrc_blk.4
	rm -f $(DESTDIR)$(BINDIR)/mrrc-replay $(DESTDIR)$(MANDIR)/man1/mrrc-replay.1
	rm -f $(patsubst lib/man3/%,$(DESTDIR)$(MANDIR)/man3/%,$(wildcard lib/man3/*.3))
	rm -rf $(DESTDIR)$(DOCDIR)/examples

# The module as a package would ship it (see Documentation/admin-guide.rst):
# its source where DKMS expects it, dkms.conf, a modules-load.d file that
# loads it at boot and the udev rule that gives /dev/mrrc to group rdma.
MODULESLOADDIR ?= /usr/lib/modules-load.d
UDEVRULESDIR ?= /usr/lib/udev/rules.d
dkms-install:
	install -d $(DESTDIR)$(DKMS_SRC)/kmod/blk $(DESTDIR)$(DKMS_SRC)/uapi
	install -m 644 Kbuild VERSION $(DESTDIR)$(DKMS_SRC)/
	sed 's|@VERSION@|$(VERSION)|' dkms.conf.in > $(DESTDIR)$(DKMS_SRC)/dkms.conf
	install -m 644 kmod/*.c kmod/*.h $(DESTDIR)$(DKMS_SRC)/kmod/
	install -m 644 kmod/blk/*.c kmod/blk/*.h $(DESTDIR)$(DKMS_SRC)/kmod/blk/
	install -m 644 uapi/mrrc_abi.h $(DESTDIR)$(DKMS_SRC)/uapi/
	install -D -m 644 packaging/mrrc-modules-load.conf $(DESTDIR)$(MODULESLOADDIR)/mrrc.conf
	install -D -m 644 packaging/90-mrrc.rules $(DESTDIR)$(UDEVRULESDIR)/90-mrrc.rules

print-version:
	@echo $(VERSION)

clean:
	rm -rf $(B)/kmod $(B)/lib $(B)/tools $(B)/selftests $(B)/tests $(B)/tests-asan \
		$(B)/bench-bin $(B)/vm $(B)/sparse $(B)/check $(B)/include $(B)/stage \
		$(B)/examples $(B)/.user-cflags

endif
