// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * libmrrc - names for the ABI's numbers, and the library's version.
 *
 * Every function returns a static string and never NULL, so its result can
 * go straight into a printf().  Thread-safe.
 */
#include <errno.h>

#define LIBMRRC_INTERNAL
#include "libmrrc.h"

#define MRRC_EXPORT __attribute__((visibility("default")))

MRRC_EXPORT unsigned int mrrc_version(void)
{
	return MRRC_VERSION_NUM;
}

MRRC_EXPORT const char *mrrc_version_string(void)
{
	return MRRC_VERSION_STRING;
}

MRRC_EXPORT const char *mrrc_opcode_str(unsigned int opcode)
{
	switch (opcode) {
	case MRRC_OP_WRITE:
		return "WRITE";
	case MRRC_OP_WRITE_IMM:
		return "WRITE_IMM";
	case MRRC_OP_READ:
		return "READ";
	case MRRC_OP_SEND:
		return "SEND";
	case MRRC_OP_RECV:
		return "RECV";
	case MRRC_OP_FETCH_ADD:
		return "FETCH_ADD";
	case MRRC_OP_CMP_SWAP:
		return "CMP_SWAP";
	case MRRC_OP_CRW:
		return "CRW";
	case MRRC_OP_STCRW:
		return "STCRW";
	case MRRC_OP_RECV_IMM:
		return "RECV_IMM";
	case MRRC_OP_EVENT:
		return "EVENT";
	default:
		return "unknown opcode";
	}
}

MRRC_EXPORT const char *mrrc_event_str(unsigned int event)
{
	switch (event) {
	case MRRC_EVENT_CONNECT_REQUEST:
		return "CONNECT_REQUEST";
	case MRRC_EVENT_ESTABLISHED:
		return "ESTABLISHED";
	case MRRC_EVENT_REJECTED:
		return "REJECTED";
	case MRRC_EVENT_UNREACHABLE:
		return "UNREACHABLE";
	case MRRC_EVENT_DISCONNECTED:
		return "DISCONNECTED";
	case MRRC_EVENT_DEVICE_REMOVAL:
		return "DEVICE_REMOVAL";
	case MRRC_EVENT_ERROR:
		return "ERROR";
	default:
		return "unknown event";
	}
}

/* What a completion's status means for mrrc (mrrc_poll_cq(3), ERRORS). */
MRRC_EXPORT const char *mrrc_status_str(int status)
{
	switch (status) {
	case 0:
		return "success";
	case -ECONNRESET:
		return "flushed: disconnected, destroyed or closed";
	case -ECONNREFUSED:
		return "connection refused";
	case -ECONNABORTED:
		return "accept failed";
	case -EPROTO:
		return "malformed reply from the peer";
	case -ENODEV:
		return "device removed";
	case -ETIMEDOUT:
		return "timed out: deadline passed or the transport gave up";
	case -ECANCELED:
		return "cancelled";
	case -EMSGSIZE:
		return "larger than the peer's buffer";
	case -EACCES:
		return "remote access error";
	case -EFAULT:
		return "local protection error";
	case -EHOSTUNREACH:
		return "host unreachable";
	case -ENETUNREACH:
		return "network unreachable";
	case -EIO:
		return "transport error";
	default:
		return status < 0 ? "unknown error" : "not a status";
	}
}
