// SPDX-License-Identifier: GPL-2.0-only
/* mrrc(8) - inspect the mrrc kernel module. */
#include "mrrc_tool.h"

int main(int argc, char **argv)
{
	return mrrc_tool_run(argc, argv, stdout, stderr);
}
