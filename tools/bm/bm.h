/* SPDX-License-Identifier: GPL-2.0-only */
/* The subcommands of bm that live in files of their own. */
#ifndef MRRC_BM_H
#define MRRC_BM_H

/* bm fix: the frame pool's load over a file or a Redy cache (fixbench.c) */
int cmd_fix(int argc, char **argv);

#endif
