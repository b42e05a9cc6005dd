/* SPDX-License-Identifier: GPL-2.0-only */
/* mrrc(8) - the command-line tool: shared declarations. */
#ifndef MRRC_TOOL_H
#define MRRC_TOOL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "libmrrc.h"

#define MRRC_TOOL_VERSION MRRC_VERSION_STRING	/* the file VERSION */

/* fmt.c: value -> text, never NULL. */
const char *mrrc_port_state_str(uint32_t state);
const char *mrrc_phys_state_str(uint32_t state);
const char *mrrc_link_layer_str(uint32_t ll);
const char *mrrc_gid_type_str(uint32_t type);
const char *mrrc_atomic_cap_str(uint32_t cap);
int mrrc_mtu_bytes(uint32_t mtu);
/* "xxxx:xxxx:xxxx:xxxx", as sysfs node_guid and ibv_devinfo print it. */
void mrrc_fmt_guid(char buf[20], uint64_t guid_be);
/* "xxxx:xxxx:...:xxxx", as sysfs ports/N/gids/M prints it. */
void mrrc_fmt_gid(char buf[40], const uint8_t gid[16]);

/* stat.c */
void mrrc_stat_print(FILE *out, const struct mrrc_cache_stats *s);
void mrrc_stat_header(FILE *out);
void mrrc_stat_line(FILE *out, const struct mrrc_cache_stats *a,
		    const struct mrrc_cache_stats *b, double secs);
int mrrc_cmd_stat(int fd, FILE *out, unsigned int interval, unsigned int count);

/* info.c */
int mrrc_cmd_info(int fd, FILE *out, const char *only_dev, bool verbose);

/* main.c's body, callable from tests: returns the exit status. */
int mrrc_tool_run(int argc, char **argv, FILE *out, FILE *err);

#endif
