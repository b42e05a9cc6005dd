# SPDX-License-Identifier: GPL-2.0-only
#
# mrrcd, the cache daemon (tools/mrrcd/): included by the top-level
# Makefile, whose variables it uses (B, USER_CFLAGS, TESTS_DIR, ...).
# The daemon joins `make tools` and `make install`; its cmocka tests
# are `make mrrcd-tests` (tools/mrrcd/check.sh runs them).

MRRCD_DIR := tools/mrrcd
MRRCD_HDRS := $(wildcard $(MRRCD_DIR)/*.h)
MRRCD_CORE := $(MRRCD_DIR)/store.c $(MRRCD_DIR)/proto.c $(MRRCD_DIR)/hash.c
MRRCD_SRCS := $(MRRCD_DIR)/mrrcd.c $(MRRCD_CORE)
MRRCD_TESTS := $(TESTS_DIR)/test_mrrcd_store $(TESTS_DIR)/test_mrrcd_proto

$(B)/tools/mrrcd: $(MRRCD_SRCS) $(MRRCD_HDRS) $(VERSION_H) $(CFLAGS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) $(USER_LDFLAGS) -o $@ $(MRRCD_SRCS)

tools: $(B)/tools/mrrcd

# The store's tests also drive the one-sided reader (reader.c) against it.
$(TESTS_DIR)/test_mrrcd_%: $(MRRCD_DIR)/tests/test_%.c $(MRRCD_CORE) \
		$(MRRCD_DIR)/reader.c $(MRRCD_HDRS) $(CFLAGS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) $(USER_LDFLAGS) $(TEST_CFLAGS) -I$(MRRCD_DIR) -o $@ $< \
		$(MRRCD_CORE) $(MRRCD_DIR)/reader.c -lcmocka

mrrcd-tests: $(MRRCD_TESTS)
unit-tests: mrrcd-tests

install: install-mrrcd
install-mrrcd: $(B)/tools/mrrcd
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man8
	install -m 755 $(B)/tools/mrrcd $(DESTDIR)$(BINDIR)/
	$(call man_install,$(MRRCD_DIR)/mrrcd.8,$(DESTDIR)$(MANDIR)/man8)

uninstall: uninstall-mrrcd
uninstall-mrrcd:
	rm -f $(DESTDIR)$(BINDIR)/mrrcd $(DESTDIR)$(MANDIR)/man8/mrrcd.8

.PHONY: mrrcd-tests install-mrrcd uninstall-mrrcd
