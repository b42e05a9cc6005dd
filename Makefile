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

VERSION := 0.1.0
LIB_MAJOR := 0
LIB_VERSION := $(LIB_MAJOR).1.0

CC ?= cc
USER_CFLAGS := -std=gnu11 -O2 -g -Wall -Wextra -Werror -Wshadow \
	-Wstrict-prototypes -Wmissing-prototypes -D_GNU_SOURCE \
	-I$(TOP)/uapi -I$(TOP)/lib $(EXTRA_CFLAGS)
HARNESS_INC := -I$(B)/linux-tools/tools/testing/selftests

PREFIX ?= /usr/local
DESTDIR ?=
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
DOCDIR ?= $(PREFIX)/share/doc/mrrc
DKMS_SRC ?= /usr/src/mrrc-$(VERSION)

LIB_SRCS := lib/libmrrc.c lib/frrwp.c
LIB_OBJS := $(patsubst lib/%.c,$(B)/lib/%.o,$(LIB_SRCS))
# The shared library's own objects: with its old symbol versions.
LIB_SO_OBJS := $(patsubst lib/%.c,$(B)/lib/so/%.o,$(LIB_SRCS))
LIB_HDRS := lib/libmrrc.h uapi/mrrc_abi.h
TOOL_SRCS := tools/mrrc/main.c tools/mrrc/cli.c tools/mrrc/info.c tools/mrrc/fmt.c \
	tools/mrrc/stat.c
TOOL_HDRS := tools/mrrc/mrrc_tool.h
SELFTESTS := $(patsubst selftests/%.c,$(B)/selftests/%,$(wildcard selftests/mrrc_*.c))
TESTS_DIR ?= $(B)/tests
UNIT_TESTS := $(TESTS_DIR)/test_libmrrc $(TESTS_DIR)/test_mrrc_tool \
	$(TESTS_DIR)/test_replay $(TESTS_DIR)/test_abi_compat
BENCHES := $(B)/bench-bin/mrrc_ops \
	$(patsubst tools/bench/%.c,$(B)/bench-bin/%,$(wildcard tools/bench/bench_*.c)) \
	$(patsubst tools/bench/%.sh,$(B)/bench-bin/%,$(wildcard tools/bench/bench_*.sh))
KMOD_SRCS := Kbuild $(wildcard kmod/*.c kmod/*.h) uapi/mrrc_abi.h \
	$(wildcard selftests/ktest/*.c)

.PHONY: all deps module modules-all lib tools selftests unit-tests initramfs \
	vm vm-pair run check check-full check-fresh bench benches fuzz debug-kernel \
	examples \
	install uninstall dkms-install clean help print-kvers \
	$(addprefix do-,$(DEPS_FIRST))

all: module lib tools selftests examples

help:
	@echo "make run            build everything and show the devices in the test VM"
	@echo "make check          every test; last line 'N passed, N failed'"
	@echo "make vm CMD='...'   run CMD in a fresh test VM (KVER=$(KVER))"
	@echo "make vm-pair        two VMs on a link: the remote selftests (KVER_A=, KVER_B=, CMD_A=, CMD_B=)"
	@echo "make bench [BENCH=name]  benchmarks in the VM -> build/bench/<name>.jsonl"
	@echo "make check-full     make check plus the two-VM suites and a longer fuzz run on the debug kernel"
	@echo "make check-fresh    the README's two commands in a fresh debootstrap root"
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
	@cp -a Kbuild kmod uapi $(B)/kmod/$*/
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
	$(CC) -shared -Wl,-soname,libmrrc.so.$(LIB_MAJOR) \
		-Wl,--version-script=lib/libmrrc.map -o $@ $(LIB_SO_OBJS)
	ln -sf libmrrc.so.$(LIB_VERSION) $(B)/lib/libmrrc.so.$(LIB_MAJOR)
	ln -sf libmrrc.so.$(LIB_MAJOR) $(B)/lib/libmrrc.so

$(B)/lib/libmrrc.a: $(LIB_OBJS)
	rm -f $@
	ar rcs $@ $^

$(B)/lib/libmrrc.pc: lib/libmrrc.pc.in
	@mkdir -p $(@D)
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	    -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' \
	    $< > $@

lib: $(B)/lib/libmrrc.so.$(LIB_VERSION) $(B)/lib/libmrrc.a $(B)/lib/libmrrc.pc

# ---- tools ----------------------------------------------------------------

$(B)/tools/mrrc: $(TOOL_SRCS) $(TOOL_HDRS) $(B)/lib/libmrrc.a
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -o $@ $(TOOL_SRCS) $(B)/lib/libmrrc.a

REPLAY_SRCS := tools/replay/main.c tools/replay/trace.c tools/replay/replay.c \
	tools/replay/refsim.c
$(B)/tools/mrrc-replay: $(REPLAY_SRCS) tools/replay/replay.h $(LIB_HDRS) $(B)/lib/libmrrc.a
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -Itools/replay -o $@ $(REPLAY_SRCS) $(B)/lib/libmrrc.a -lm

# ---- fuzzer (tools/fuzz/) ----
FUZZ_SRCS := $(wildcard tools/fuzz/*.c)
FUZZ_HDRS := $(wildcard tools/fuzz/*.h)
$(B)/tools/mrrc_fuzz: $(FUZZ_SRCS) $(FUZZ_HDRS) $(LIB_HDRS) $(B)/lib/libmrrc.a
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -Itools/fuzz -o $@ $(FUZZ_SRCS) $(B)/lib/libmrrc.a -lpthread

tools: $(B)/tools/mrrc $(B)/tools/mrrc-replay $(if $(FUZZ_SRCS),$(B)/tools/mrrc_fuzz)

# ---- examples (examples/), also installed as documentation ----
EXAMPLES := $(patsubst examples/%.c,$(B)/examples/%,$(wildcard examples/*.c))
$(B)/examples/%: examples/%.c examples/example.h $(LIB_HDRS) $(B)/lib/libmrrc.a
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -o $@ $< $(B)/lib/libmrrc.a

examples: $(EXAMPLES)

$(B)/bench-bin/%: tools/bench/%.c $(LIB_HDRS) $(B)/lib/libmrrc.a
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -o $@ $< $(B)/lib/libmrrc.a

$(B)/bench-bin/%: tools/bench/%.sh
	@mkdir -p $(@D)
	install -m 755 $< $@

benches: $(BENCHES)

# ---- tests ----------------------------------------------------------------

# The hostile peer of the two-VM tests speaks verbs itself.
$(B)/selftests/mrrc_hostile: SELFTEST_LIBS := -lrdmacm -libverbs
$(B)/selftests/%: selftests/%.c selftests/mrrc_test.h selftests/mrrc_dp_test.h selftests/mrrc_pair.h $(LIB_HDRS) $(B)/lib/libmrrc.a | deps
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) $(HARNESS_INC) -Wno-missing-prototypes -Wno-sign-compare -Wno-unused-parameter -o $@ $< \
		$(B)/lib/libmrrc.a -lpthread $(SELFTEST_LIBS)

selftests: $(SELFTESTS)

# Host unit tests: the library and the tool with ioctl() behind ld --wrap.
WRAP := -Wl,--wrap=ioctl -Wl,--wrap=open
$(TESTS_DIR)/test_libmrrc: lib/tests/test_libmrrc.c $(LIB_SRCS) $(LIB_HDRS)
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) $(TEST_CFLAGS) -o $@ $< $(LIB_SRCS) $(WRAP) -lcmocka

# Linked against the shared library, to reach its old symbol versions.
$(TESTS_DIR)/test_abi_compat: lib/tests/test_abi_compat.c $(B)/lib/libmrrc.so.$(LIB_VERSION)
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) $(TEST_CFLAGS) -o $@ $< -L$(B)/lib -lmrrc \
		-Wl,-rpath,$(abspath $(B)/lib) -lcmocka

$(TESTS_DIR)/test_mrrc_tool: tools/tests/test_mrrc_tool.c $(TOOL_SRCS) $(TOOL_HDRS) $(LIB_SRCS) $(LIB_HDRS)
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) $(TEST_CFLAGS) -Itools/mrrc -o $@ $< \
		$(filter-out tools/mrrc/main.c,$(TOOL_SRCS)) $(LIB_SRCS) $(WRAP) -lcmocka

$(TESTS_DIR)/test_replay: tools/tests/test_replay.c tools/replay/trace.c tools/replay/refsim.c tools/replay/replay.h
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) $(TEST_CFLAGS) -Itools/replay -o $@ $< \
		tools/replay/trace.c tools/replay/refsim.c -lcmocka -lm

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
	@$(MAKE) --no-print-directory -s all initramfs KVER=$(KVER) > $(B)/vm-build.log 2>&1 || \
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
		$(MAKE) --no-print-directory -s all initramfs KVER=$$k > $(B)/vm-build.log 2>&1 || \
			{ cat $(B)/vm-build.log; exit 1; }; \
	done
	@tools/vm/pair.sh $(call kver,$(KVER_A)) $(call kver,$(KVER_B)) '$(CMD_A)' '$(CMD_B)'

do-run:
	@$(MAKE) --no-print-directory do-vm \
		CMD='rdma link show; echo; $(B)/tools/mrrc info'

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
	@$(MAKE) --no-print-directory -s all benches initramfs KVER=$(KVER)
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

# ---- install --------------------------------------------------------------

install: lib tools
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR)/mrrc \
		$(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man3 $(DESTDIR)$(MANDIR)/man8
	install -m 644 $(B)/lib/libmrrc.so.$(LIB_VERSION) $(B)/lib/libmrrc.a $(DESTDIR)$(LIBDIR)/
	ln -sf libmrrc.so.$(LIB_VERSION) $(DESTDIR)$(LIBDIR)/libmrrc.so.$(LIB_MAJOR)
	ln -sf libmrrc.so.$(LIB_MAJOR) $(DESTDIR)$(LIBDIR)/libmrrc.so
	install -m 644 $(B)/lib/libmrrc.pc $(DESTDIR)$(LIBDIR)/pkgconfig/
	install -m 644 $(LIB_HDRS) $(DESTDIR)$(INCLUDEDIR)/mrrc/
	install -d $(DESTDIR)$(MANDIR)/man1
	install -m 755 $(B)/tools/mrrc $(B)/tools/mrrc-replay $(DESTDIR)$(BINDIR)/
	install -m 644 tools/replay/mrrc-replay.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 644 lib/man3/*.3 $(DESTDIR)$(MANDIR)/man3/
	install -m 644 tools/mrrc/mrrc.8 $(DESTDIR)$(MANDIR)/man8/
	install -d $(DESTDIR)$(DOCDIR)/examples
	install -m 644 examples/*.c examples/*.h $(DESTDIR)$(DOCDIR)/examples/

uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/libmrrc.* $(DESTDIR)$(LIBDIR)/pkgconfig/libmrrc.pc
	rm -rf $(DESTDIR)$(INCLUDEDIR)/mrrc
	rm -f $(DESTDIR)$(BINDIR)/mrrc $(DESTDIR)$(MANDIR)/man8/mrrc.8
	rm -f $(DESTDIR)$(BINDIR)/mrrc-replay $(DESTDIR)$(MANDIR)/man1/mrrc-replay.1
	rm -f $(patsubst lib/man3/%,$(DESTDIR)$(MANDIR)/man3/%,$(wildcard lib/man3/*.3))
	rm -rf $(DESTDIR)$(DOCDIR)/examples

# Copy the module sources where DKMS expects them; see Documentation/admin-guide.rst.
dkms-install:
	install -d $(DESTDIR)$(DKMS_SRC)/kmod $(DESTDIR)$(DKMS_SRC)/uapi
	install -m 644 Kbuild dkms.conf $(DESTDIR)$(DKMS_SRC)/
	install -m 644 kmod/*.c kmod/*.h $(DESTDIR)$(DKMS_SRC)/kmod/
	install -m 644 uapi/mrrc_abi.h $(DESTDIR)$(DKMS_SRC)/uapi/

clean:
	rm -rf $(B)/kmod $(B)/lib $(B)/tools $(B)/selftests $(B)/tests $(B)/tests-asan \
		$(B)/bench-bin $(B)/vm $(B)/sparse $(B)/check

endif
