# SPDX-License-Identifier: GPL-2.0-only
#
# The distributed buffer manager (tools/bm/, issue 18): included by the
# top-level Makefile, whose variables it uses.  So far the coherence
# protocol's state machine (coh.c) and the linearizability checker
# (lin.c) and the frame pool (pool.c, FIX/UNFIX and 2Q), with their unit
# tests in `make unit-tests`, and `bm` (bm.c, fixbench.c):
# nodes running the protocol over the module, the check of their
# histories, and the frame pool's load over a file, a file on another
# node (rfile.c: bm fserve) or a Redy cache
# (tools/bm/tests/bm.sh in the test VM).  `make install` installs bm and
# bm(1).

BM_DIR := tools/bm
BM_HDRS := $(wildcard $(BM_DIR)/*.h)

$(TESTS_DIR)/test_bm_coh: $(BM_DIR)/tests/test_coh.c $(BM_DIR)/coh.c $(BM_DIR)/lin.c \
		$(BM_HDRS) $(CFLAGS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) $(USER_LDFLAGS) $(TEST_CFLAGS) -I$(BM_DIR) -o $@ $< \
		$(BM_DIR)/coh.c $(BM_DIR)/lin.c -lcmocka
UNIT_TESTS += $(TESTS_DIR)/test_bm_coh

$(TESTS_DIR)/test_bm_pool: $(BM_DIR)/tests/test_pool.c $(BM_DIR)/pool.c $(BM_HDRS) \
		$(CFLAGS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) $(USER_LDFLAGS) $(TEST_CFLAGS) -I$(BM_DIR) -o $@ $< \
		$(BM_DIR)/pool.c -lcmocka -lpthread
UNIT_TESTS += $(TESTS_DIR)/test_bm_pool

$(TESTS_DIR)/test_bm_galloc: $(BM_DIR)/tests/test_galloc.c $(BM_DIR)/galloc.c \
		$(BM_HDRS) $(CFLAGS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) $(USER_LDFLAGS) $(TEST_CFLAGS) -I$(BM_DIR) -o $@ $< \
		$(BM_DIR)/galloc.c -lcmocka
UNIT_TESTS += $(TESTS_DIR)/test_bm_galloc

$(TESTS_DIR)/test_bm_lock: $(BM_DIR)/tests/test_lock.c $(BM_DIR)/lock.c \
		$(BM_HDRS) $(CFLAGS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) $(USER_LDFLAGS) $(TEST_CFLAGS) -I$(BM_DIR) -o $@ $< \
		$(BM_DIR)/lock.c -lcmocka
UNIT_TESTS += $(TESTS_DIR)/test_bm_lock

# bm: the nodes over the module's connections, and the checker
# and `bm fix`, the frame pool's load over a file or a Redy cache
# (and mrrcd's client, for the frame pool with mrrcd in front of a file)
BM_SRCS := $(BM_DIR)/bm.c $(BM_DIR)/coh.c $(BM_DIR)/lin.c $(BM_DIR)/pool.c $(BM_DIR)/galloc.c \
	$(BM_DIR)/lock.c $(BM_DIR)/rfile.c $(BM_DIR)/fixbench.c tools/bench/benchjson.c \
	tools/mrrcd/kvclient.c tools/mrrcd/reader.c tools/mrrcd/hash.c
$(B)/tools/bm: $(BM_SRCS) $(BM_HDRS) $(BENCHJSON) $(LIB_HDRS) $(B)/lib/libmrrc.a \
		$(B)/lib/libredy.a $(wildcard tools/redy/*.h) $(MRRCD_HDRS)
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) $(USER_LDFLAGS) -Itools/bench -Itools/redy -Itools/mrrcd \
		-o $@ $(BM_SRCS) $(B)/lib/libredy.a $(B)/lib/libmrrc.a -lpthread -lm
tools: $(B)/tools/bm

install: install-bm
install-bm: $(B)/tools/bm
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1
	install -m 755 $(B)/tools/bm $(DESTDIR)$(BINDIR)/
	$(call man_install,$(BM_DIR)/bm.1,$(DESTDIR)$(MANDIR)/man1)

uninstall: uninstall-bm
uninstall-bm:
	rm -f $(DESTDIR)$(BINDIR)/bm $(DESTDIR)$(MANDIR)/man1/bm.1

.PHONY: install-bm uninstall-bm
