// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * mrrc_kv - mrrcd from a program, with libmrrckv.
 *
 * Stores a value in mrrcd, reads it back with the text protocol and, over
 * RDMA, with one-sided READs of the daemon's arena (no daemon CPU), then
 * deletes it and checks that it is gone.
 *
 *	mrrc_kv [-r] [-d DEVICE] HOST [PORT]	(-r: over /dev/mrrc;
 *						 port 11211 by default)
 *
 * Build:  cc -o mrrc_kv mrrc_kv.c $(pkg-config --cflags --libs libmrrckv)
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mrrc/kv/kvclient.h>

#define KEY	"mrrc_kv:greeting"
#define VALUE	"hello from libmrrckv"

static int usage(void)
{
	fprintf(stderr, "usage: mrrc_kv [-r] [-d DEVICE] HOST [PORT]\n");
	return 2;
}

/* One GET by the text protocol or, with @one_sided, by RDMA READs. */
static int show(struct kvc *k, bool one_sided)
{
	const char *val;
	size_t len;
	int err;

	err = one_sided ? kvc_oget(k, KEY, &val, &len, NULL) :
			  kvc_get(k, KEY, &val, &len, NULL);
	if (err)
		return err;
	printf("%s %.*s\n", one_sided ? "oget:" : "get: ", (int)len, val);
	return len == strlen(VALUE) && !memcmp(val, VALUE, len) ? 0 : -EBADMSG;
}

int main(int argc, char **argv)
{
	const char *dev = NULL;
	unsigned long port = 11211;
	bool rdma = false;
	struct kvc k;
	char *end;
	int opt, err;

	while ((opt = getopt(argc, argv, "rd:")) != -1) {
		if (opt == 'r')
			rdma = true;
		else if (opt == 'd')
			dev = optarg;
		else
			return usage();
	}
	if (optind >= argc || argc - optind > 2)
		return usage();
	if (argc - optind == 2) {
		port = strtoul(argv[optind + 1], &end, 10);
		if (*end || !port || port > 65535)
			return usage();
	}
	err = rdma ? kvc_connect_rdma(&k, dev, argv[optind], port) :
		     kvc_connect_tcp(&k, argv[optind], port);
	if (err) {
		fprintf(stderr, "mrrc_kv: cannot connect: %s\n", strerror(-err));
		return 1;
	}
	err = kvc_store(&k, "set", KEY, VALUE, strlen(VALUE), 0, 0);
	if (!err)
		err = show(&k, false);
	if (!err && rdma)
		err = show(&k, true);
	if (!err)
		err = kvc_delete(&k, KEY);
	if (!err) {
		err = show(&k, false);
		err = err == -ENOENT ? 0 : err ? err : -EEXIST;
		if (!err)
			printf("deleted\n");
	}
	kvc_close(&k);
	if (err) {
		fprintf(stderr, "mrrc_kv: %s\n", strerror(-err));
		return 1;
	}
	return 0;
}
