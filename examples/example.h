/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/* What the examples share: binding to a named or the first device. */
#ifndef MRRC_EXAMPLE_H
#define MRRC_EXAMPLE_H

#include <errno.h>
#include <mrrc/libmrrc.h>

/* Bind @fd to @dev, or to the first RDMA device the module knows. */
static inline int mrrc_bind_first(int fd, const char *dev)
{
	struct mrrc_dev_info info;
	unsigned int n = 1;
	int ret;

	if (dev)
		return mrrc_bind(fd, dev, NULL);
	ret = mrrc_dev_list(fd, &info, &n);
	if (ret)
		return ret;
	if (!n)
		return -ENODEV;
	return mrrc_bind(fd, info.name, NULL);
}

#endif
