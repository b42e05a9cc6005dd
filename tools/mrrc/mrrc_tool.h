/* SPDX-License-Identifier: GPL-2.0-only */
/* mrrc(8) - the command-line tool: shared declarations. */
#ifndef MRRC_TOOL_H
#define MRRC_TOOL_H

#include <net/if.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "libmrrc.h"

#define MRRC_TOOL_VERSION MRRC_VERSION_STRING	/* the file VERSION */

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* fmt.c: value -> text, never NULL. */
const char *mrrc_port_state_str(uint32_t state);
const char *mrrc_phys_state_str(uint32_t state);
const char *mrrc_link_layer_str(uint32_t ll);
const char *mrrc_gid_type_str(uint32_t type);
const char *mrrc_atomic_cap_str(uint32_t cap);
int mrrc_mtu_bytes(uint32_t mtu);
/* enum mrrc_conn_state: its name, or the number written into @buf. */
const char *mrrc_conn_state_str(char buf[12], uint32_t state);
/* The address of @a (IPv4 or IPv6, no scope), or NULL for another family. */
const char *mrrc_fmt_ip(char buf[INET6_ADDRSTRLEN], const struct mrrc_addr *a);
/*
 * "ip:port", "[ip6]:port" or "[ip6%scope]:port" (the interface's name, or
 * its index), as ss(8) prints them; "*" for no address (family 0, port 0),
 * "*:port" with a port, "?:port" for an unknown family.
 */
#define MRRC_ADDR_STRLEN (INET6_ADDRSTRLEN + IF_NAMESIZE + 10)
void mrrc_fmt_addr(char buf[MRRC_ADDR_STRLEN], const struct mrrc_addr *a);
/* "xxxx:xxxx:xxxx:xxxx", as sysfs node_guid and ibv_devinfo print it. */
void mrrc_fmt_guid(char buf[20], uint64_t guid_be);
/* "xxxx:xxxx:...:xxxx", as sysfs ports/N/gids/M prints it. */
void mrrc_fmt_gid(char buf[40], const uint8_t gid[16]);
/* "major.minor.sub": bits 63-32, 31-16 and 15-0, sub with 4 digits. */
void mrrc_fmt_fw_ver(char buf[24], uint64_t fw_ver);

/*
 * fmt.c: JSON output.  Members (@key NULL inside an array) get their
 * commas, and with @pretty a line each, indented by nesting; closing the
 * outermost container ends the line.  Start with { .out = f }.
 */
struct mrrc_json {
	FILE *out;
	bool pretty;
	bool sep;		/* a member precedes: a comma first */
	unsigned int depth;
};

/* @s as a JSON string: quoted, escaped, invalid UTF-8 bytes as \u00XX. */
void mrrc_json_escape(FILE *out, const char *s);
void mrrc_json_open(struct mrrc_json *j, const char *key, char bracket);
void mrrc_json_close(struct mrrc_json *j, char bracket);
void mrrc_json_u64(struct mrrc_json *j, const char *key, uint64_t v);
void mrrc_json_double(struct mrrc_json *j, const char *key, double v);
void mrrc_json_str(struct mrrc_json *j, const char *key, const char *s);

/* stat.c: @pages in kB of the system's page size; requests served, in %. */
uint64_t mrrc_pages_kb(uint64_t pages);
double mrrc_hit_pct(uint64_t hits, uint64_t requests);

/* stat.c; @json NULL means text. */
void mrrc_stat_print(FILE *out, const struct mrrc_cache_stats *s);
void mrrc_stat_json(struct mrrc_json *j, const char *key,
		    const struct mrrc_cache_stats *s);
void mrrc_stat_header(FILE *out);
void mrrc_stat_line(FILE *out, const struct mrrc_cache_stats *a,
		    const struct mrrc_cache_stats *b, double secs);
void mrrc_stat_json_line(FILE *out, const struct mrrc_cache_stats *a,
			 const struct mrrc_cache_stats *b, double secs);
int mrrc_cmd_stat(int fd, FILE *out, struct mrrc_json *json,
		  unsigned int interval, unsigned int count);

/* blk.c: mrrc_blk's sysfs files; exit statuses. */
int mrrc_cmd_blk_attach(FILE *out, FILE *err, const char *addr,
			unsigned int queues, unsigned int depth);
int mrrc_cmd_blk_detach(FILE *err, const char *name);
int mrrc_cmd_blk_list(FILE *out, struct mrrc_json *json);

/* info.c */
int mrrc_cmd_info(int fd, FILE *out, struct mrrc_json *json,
		  const char *only_dev, bool verbose);
/* Every device, into a new array in *@devs; returns the count or -errno. */
int mrrc_list_devices(int fd, struct mrrc_dev_info **devs);

/*
 * ctx.c: a list call of libmrrc (@arg: its argument, if it takes one):
 * *@count in, the room in @buf; out, how many there are.
 */
typedef int (*mrrc_list_fn)(int fd, uint32_t arg, void *buf,
			    unsigned int *count);
/*
 * The whole list, into a new array of @size-byte elements in *@list
 * (NULL when empty): count first, then fetch, again while it grows, a few
 * times.  Returns the count, or -errno (-EAGAIN: it kept growing).
 */
int mrrc_fetch_list(int fd, mrrc_list_fn fn, uint32_t arg, size_t size,
		    void **list);
/* "mrrc ctx"; "mrrc conn", of context @ctx_id only if not 0. */
int mrrc_cmd_ctx(int fd, FILE *out, struct mrrc_json *json);
int mrrc_cmd_conn(int fd, FILE *out, struct mrrc_json *json,
		  uint32_t ctx_id);

/* main.c's body, callable from tests: returns the exit status. */
int mrrc_tool_run(int argc, char **argv, FILE *out, FILE *err);

#endif
