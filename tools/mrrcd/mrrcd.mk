# SPDX-License-Identifier: GPL-2.0-only
#
# mrrcd, the cache daemon (tools/mrrcd/): included by the top-level
# Makefile, whose variables it uses (B, USER_CFLAGS, TESTS_DIR, ...).
# The daemon joins `make tools` and `make install`; its cmocka tests
# are `make mrrcd-tests` (tools/mrrcd/check.sh runs them).

MRRCD_DIR := tools/mrrcd
MRRCD_HDRS := $(wildcard $(MRRCD_DIR)/*.h) lib/mark_defined.h
MRRCD_CORE := $(MRRCD_DIR)/store.c $(MRRCD_DIR)/proto.c $(MRRCD_DIR)/hash.c
# --redy: the Redy memory server of tools/redy/ (redysrv.c) beside the store
MRRCD_SRCS := $(MRRCD_DIR)/mrrcd.c $(MRRCD_DIR)/rdma.c $(MRRCD_CORE) \
	tools/redy/redysrv.c tools/redy/client.c
MRRCKV_SRCS := $(MRRCD_DIR)/mrrckv.c $(MRRCD_DIR)/kvclient.c \
	$(MRRCD_DIR)/reader.c $(MRRCD_DIR)/hash.c $(MRRCD_DIR)/load.c
MRRCD_TESTS := $(TESTS_DIR)/test_mrrcd_store $(TESTS_DIR)/test_mrrcd_proto

$(B)/tools/mrrcd: $(MRRCD_SRCS) $(MRRCD_HDRS) $(wildcard tools/redy/*.h) $(VERSION_H) \
		$(CFLAGS_STAMP) $(B)/lib/libmrrc.a
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) $(USER_LDFLAGS) -Itools/redy -o $@ $(MRRCD_SRCS) \
		$(B)/lib/libmrrc.a -lpthread -lm

# The client: mrrckv(1), and the RDMA checks that run in the test VM.
$(B)/tools/mrrckv: $(MRRCKV_SRCS) $(MRRCD_HDRS) $(VERSION_H) $(CFLAGS_STAMP) \
		$(B)/lib/libmrrc.a
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) $(USER_LDFLAGS) -o $@ $(MRRCKV_SRCS) $(B)/lib/libmrrc.a -lm

tools: $(B)/tools/mrrcd $(B)/tools/mrrckv

# libmrrckv: the client (kvclient.h) as a static library for programs,
# installed with libmrrc (headers in $(INCLUDEDIR)/mrrc/kv/, libmrrckv.pc,
# libmrrckv(3)); examples/mrrc_kv.c is built against it.
MRRCKV_LIB_SRCS := $(MRRCD_DIR)/kvclient.c $(MRRCD_DIR)/reader.c $(MRRCD_DIR)/hash.c
MRRCKV_LIB_OBJS := $(patsubst $(MRRCD_DIR)/%.c,$(B)/lib/kv/%.o,$(MRRCKV_LIB_SRCS))
MRRCKV_PUB_HDRS := $(MRRCD_DIR)/kvclient.h $(MRRCD_DIR)/kvwire.h \
	$(MRRCD_DIR)/reader.h $(MRRCD_DIR)/layout.h
$(B)/lib/kv/%.o: $(MRRCD_DIR)/%.c $(MRRCD_HDRS) $(LIB_HDRS) $(CFLAGS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -c -o $@ $<
$(B)/lib/libmrrckv.a: $(MRRCKV_LIB_OBJS)
	rm -f $@
	ar rcs $@ $^
lib: $(B)/lib/libmrrckv.a
$(STAGE)/.stamp: $(B)/lib/libmrrckv.a $(MRRCKV_PUB_HDRS) lib/libmrrckv.pc.in \
	$(MRRCD_DIR)/libmrrckv.3
$(B)/examples/mrrc_kv: EXAMPLE_PC := libmrrckv

install-lib: install-libkv
install-libkv: $(B)/lib/libmrrckv.a
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR)/mrrc/kv \
		$(DESTDIR)$(MANDIR)/man3
	install -m 644 $(B)/lib/libmrrckv.a $(DESTDIR)$(LIBDIR)/
	install -m 644 $(MRRCKV_PUB_HDRS) $(DESTDIR)$(INCLUDEDIR)/mrrc/kv/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	    -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' \
	    lib/libmrrckv.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/libmrrckv.pc
	$(call man_install,$(MRRCD_DIR)/libmrrckv.3,$(DESTDIR)$(MANDIR)/man3)

# The store's tests also drive the one-sided reader (reader.c) against it.
$(TESTS_DIR)/test_mrrcd_%: $(MRRCD_DIR)/tests/test_%.c $(MRRCD_CORE) \
		$(MRRCD_DIR)/reader.c $(MRRCD_HDRS) $(CFLAGS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) $(USER_LDFLAGS) $(TEST_CFLAGS) -I$(MRRCD_DIR) -o $@ $< \
		$(MRRCD_CORE) $(MRRCD_DIR)/reader.c -lcmocka -lpthread

mrrcd-tests: $(MRRCD_TESTS)
unit-tests: mrrcd-tests

# The daemon under ThreadSanitizer, for its -t checks (libmrrc is not
# instrumented: only the RDMA path, one thread's, calls it).
$(B)/tsan/mrrcd: $(MRRCD_SRCS) $(MRRCD_HDRS) $(wildcard tools/redy/*.h) $(VERSION_H) \
		$(CFLAGS_STAMP) $(B)/lib/libmrrc.a
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -O1 -fsanitize=thread -Wno-tsan $(USER_LDFLAGS) \
		-Itools/redy -o $@ $(MRRCD_SRCS) $(B)/lib/libmrrc.a -lpthread -lm
mrrcd-tsan: $(B)/tsan/mrrcd

install: install-mrrcd
install-mrrcd: $(B)/tools/mrrcd $(B)/tools/mrrckv
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(MANDIR)/man1
	install -m 755 $(B)/tools/mrrcd $(B)/tools/mrrckv $(DESTDIR)$(BINDIR)/
	$(call man_install,$(MRRCD_DIR)/mrrcd.8,$(DESTDIR)$(MANDIR)/man8)
	$(call man_install,$(MRRCD_DIR)/mrrckv.1,$(DESTDIR)$(MANDIR)/man1)

uninstall: uninstall-mrrcd
uninstall-mrrcd:
	rm -f $(DESTDIR)$(LIBDIR)/libmrrckv.a $(DESTDIR)$(LIBDIR)/pkgconfig/libmrrckv.pc \
		$(DESTDIR)$(MANDIR)/man3/libmrrckv.3
	rm -f $(DESTDIR)$(BINDIR)/mrrcd $(DESTDIR)$(BINDIR)/mrrckv $(DESTDIR)$(MANDIR)/man8/mrrcd.8 \
		$(DESTDIR)$(MANDIR)/man1/mrrckv.1

.PHONY: mrrcd-tests mrrcd-tsan install-mrrcd uninstall-mrrcd install-libkv

# Run in the test VM by selftests/run.sh (tools/mrrcd/tests/kv_rdma.sh).
$(TESTS_DIR)/kv_rdma: $(MRRCD_DIR)/tests/kv_rdma.c $(MRRCKV_SRCS) $(MRRCD_HDRS) \
		$(CFLAGS_STAMP) $(B)/lib/libmrrc.a
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) $(USER_LDFLAGS) -I$(MRRCD_DIR) -o $@ $< \
		$(filter-out %/mrrckv.c %/load.c,$(MRRCKV_SRCS)) $(B)/lib/libmrrc.a
tools: $(TESTS_DIR)/kv_rdma
