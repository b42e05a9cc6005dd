# SPDX-License-Identifier: GPL-2.0-only
#
# Redy (tools/redy/): remote-memory caches with SLOs.  Included by the
# top-level Makefile, whose variables it uses.  redyd (the memory server)
# and redy (the client tool) join `make tools` and `make install`; the
# model's unit tests are part of `make unit-tests`.

REDY_DIR := tools/redy
REDY_HDRS := $(wildcard $(REDY_DIR)/*.h)

$(B)/tools/redyd: $(REDY_DIR)/redyd.c $(REDY_DIR)/redysrv.c $(REDY_DIR)/client.c $(REDY_HDRS) $(LIB_HDRS) \
		$(B)/lib/libmrrc.a
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) $(USER_LDFLAGS) -o $@ $(REDY_DIR)/redyd.c $(REDY_DIR)/redysrv.c \
		$(REDY_DIR)/client.c $(B)/lib/libmrrc.a -lpthread -lm

REDY_SRCS := $(REDY_DIR)/redy.c $(REDY_DIR)/client.c $(REDY_DIR)/slo.c $(REDY_DIR)/cache.c \
	tools/bench/benchjson.c
$(B)/tools/redy: $(REDY_SRCS) $(REDY_HDRS) $(BENCHJSON) $(LIB_HDRS) $(B)/lib/libmrrc.a
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) $(USER_LDFLAGS) -Itools/bench -o $@ $(REDY_SRCS) \
		$(B)/lib/libmrrc.a -lpthread -lm

$(B)/tools/redymgr: $(REDY_DIR)/mgr.c $(REDY_DIR)/slo.c $(REDY_HDRS) $(LIB_HDRS)
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) $(USER_LDFLAGS) -o $@ $(REDY_DIR)/mgr.c $(REDY_DIR)/slo.c -lm

tools: $(B)/tools/redyd $(B)/tools/redy $(B)/tools/redymgr

# libredy: the cache (cache.h, Table 1) as a static library for programs,
# installed with libmrrc (headers in $(INCLUDEDIR)/mrrc/redy/, libredy.pc,
# redy_cache(3)); examples/redy_cache.c is built against it.
REDY_LIB_SRCS := $(REDY_DIR)/cache.c $(REDY_DIR)/client.c $(REDY_DIR)/slo.c
REDY_LIB_OBJS := $(patsubst $(REDY_DIR)/%.c,$(B)/lib/redy/%.o,$(REDY_LIB_SRCS))
REDY_PUB_HDRS := $(REDY_DIR)/cache.h $(REDY_DIR)/slo.h
$(B)/lib/redy/%.o: $(REDY_DIR)/%.c $(REDY_HDRS) $(LIB_HDRS) $(CFLAGS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -c -o $@ $<
$(B)/lib/libredy.a: $(REDY_LIB_OBJS)
	rm -f $@
	ar rcs $@ $^
lib: $(B)/lib/libredy.a
$(STAGE)/.stamp: $(B)/lib/libredy.a $(REDY_PUB_HDRS) lib/libredy.pc.in \
	$(REDY_DIR)/redy_cache.3
$(B)/examples/redy_cache: EXAMPLE_PC := libredy

install-lib: install-libredy
install-libredy: $(B)/lib/libredy.a
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR)/mrrc/redy \
		$(DESTDIR)$(MANDIR)/man3
	install -m 644 $(B)/lib/libredy.a $(DESTDIR)$(LIBDIR)/
	install -m 644 $(REDY_PUB_HDRS) $(DESTDIR)$(INCLUDEDIR)/mrrc/redy/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	    -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' \
	    lib/libredy.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/libredy.pc
	$(call man_install,$(REDY_DIR)/redy_cache.3,$(DESTDIR)$(MANDIR)/man3)

$(TESTS_DIR)/test_redy_slo: $(REDY_DIR)/tests/test_slo.c $(REDY_DIR)/slo.c \
		$(REDY_HDRS) $(CFLAGS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) $(USER_LDFLAGS) $(TEST_CFLAGS) -I$(REDY_DIR) -o $@ $< \
		$(REDY_DIR)/slo.c -lcmocka -lm
UNIT_TESTS += $(TESTS_DIR)/test_redy_slo

install: install-redy
install-redy: $(B)/tools/redyd $(B)/tools/redy $(B)/tools/redymgr
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(MANDIR)/man1
	install -m 755 $(B)/tools/redyd $(B)/tools/redy $(B)/tools/redymgr $(DESTDIR)$(BINDIR)/
	$(call man_install,$(REDY_DIR)/redy.1,$(DESTDIR)$(MANDIR)/man1)
	$(call man_install,$(REDY_DIR)/redyd.8,$(DESTDIR)$(MANDIR)/man8)
	$(call man_install,$(REDY_DIR)/redymgr.8,$(DESTDIR)$(MANDIR)/man8)

uninstall: uninstall-redy
uninstall-redy:
	rm -f $(DESTDIR)$(LIBDIR)/libredy.a $(DESTDIR)$(LIBDIR)/pkgconfig/libredy.pc \
		$(DESTDIR)$(MANDIR)/man3/redy_cache.3
	rm -f $(DESTDIR)$(BINDIR)/redyd $(DESTDIR)$(BINDIR)/redy $(DESTDIR)$(BINDIR)/redymgr
	rm -f $(DESTDIR)$(MANDIR)/man1/redy.1 $(DESTDIR)$(MANDIR)/man8/redyd.8 \
		$(DESTDIR)$(MANDIR)/man8/redymgr.8

.PHONY: install-redy uninstall-redy install-libredy
