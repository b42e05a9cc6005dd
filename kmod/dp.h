/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * mrrc - what data.c, crw.c and event.c share; module-internal.  The
 * locking is conn.h's (and the table in mrrc.h).
 */
#ifndef _MRRC_DP_H
#define _MRRC_DP_H

#include "conn.h"

/* Most operations one POST, and completions one POLL, takes. */
#define MRRC_MAX_BATCH		65536

/* data.c */
void mrrc_op_part_done(struct mrrc_op *op, u8 part, int status);
void mrrc_op_wr_finish(struct mrrc_op *op, int status);
void mrrc_op_wr_done(struct ib_cq *cq, struct ib_wc *wc);
void mrrc_rx_repost(struct mrrc_conn *conn, struct mrrc_rx *rx);
void mrrc_conn_kick(struct mrrc_conn *conn);

/* crw.c */
struct mrrc_op *mrrc_tag_lookup(struct hlist_head *table, u64 tag);
void mrrc_crw_submit(struct mrrc_conn *conn, struct mrrc_op *op,
		     u64 deadline_ns);
bool mrrc_crw_msg(struct mrrc_conn *conn, struct mrrc_rx *rx, int status);
void mrrc_op_remote_inv(struct mrrc_conn *conn, struct mrrc_op *op,
			const struct mrrc_rx *rx);

#endif /* _MRRC_DP_H */
