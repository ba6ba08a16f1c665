// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * libsofthca: ib_uverbs commands over write().
 *
 * A legacy command is one write() of a struct ib_uverbs_cmd_hdr followed
 * by the command struct (whose first field is the user address of the
 * response buffer) and any driver data.  in_words counts 32-bit words of
 * the whole write, out_words of the response buffer.  ib_uverbs hands the
 * driver whatever follows the core command/response as its udata.
 *
 * An extended command (IB_USER_VERBS_CMD_FLAG_EXTENDED) puts a struct
 * ib_uverbs_ex_cmd_hdr, which holds the response pointer, between the
 * header and the command; its in_words/out_words count 64-bit words of
 * the core command and response only, and the provider words (none
 * here) are counted in the ex header.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

#define SHCA_CMD_MAX 512

/* One write() of a whole command: 0 or an errno. */
static int shca_write_all(int fd, const void *buf, size_t total)
{
	ssize_t n = write(fd, buf, total);

	if (n < 0)
		return errno;
	return (size_t)n == total ? 0 : EIO;
}

static int shca_write(int fd, uint32_t command, const void *req,
		      size_t req_len, const void *resp, size_t resp_len)
{
	uint64_t buf[SHCA_CMD_MAX / 8];
	struct ib_uverbs_cmd_hdr *hdr = (void *)buf;
	size_t total = sizeof(*hdr) + req_len;
	uint64_t response = (uintptr_t)resp;

	if (total > sizeof(buf) || total % 4 || resp_len % 4 ||
	    total / 4 > UINT16_MAX || resp_len / 4 > UINT16_MAX ||
	    (resp && req_len < sizeof(response)))
		return EINVAL;

	hdr->command = command;
	hdr->in_words = (uint16_t)(total / 4);
	hdr->out_words = (uint16_t)(resp_len / 4);
	memcpy(hdr + 1, req, req_len);
	/* A command with a response starts with the response pointer. */
	if (resp)
		memcpy(hdr + 1, &response, sizeof(response));
	return shca_write_all(fd, buf, total);
}

int shca_cmd(int fd, uint32_t command, void *req, size_t req_len,
	     void *resp, size_t resp_len)
{
	/* The kernel may answer with fewer bytes than the struct holds. */
	memset(resp, 0, resp_len);
	return shca_write(fd, command, req, req_len, resp, resp_len);
}

int shca_cmd_noresp(int fd, uint32_t command, const void *req,
		    size_t req_len)
{
	return shca_write(fd, command, req, req_len, NULL, 0);
}

int shca_cmd_ex(int fd, uint32_t command, const void *req, size_t req_len,
		void *resp, size_t resp_len)
{
	uint64_t buf[SHCA_CMD_MAX / 8];
	struct ib_uverbs_cmd_hdr *hdr = (void *)buf;
	struct ib_uverbs_ex_cmd_hdr *ex = (void *)(hdr + 1);
	size_t total = sizeof(*hdr) + sizeof(*ex) + req_len;

	if (total > sizeof(buf) || req_len % 8 || resp_len % 8 ||
	    req_len / 8 > UINT16_MAX || resp_len / 8 > UINT16_MAX)
		return EINVAL;
	memset(resp, 0, resp_len);
	hdr->command = IB_USER_VERBS_CMD_FLAG_EXTENDED | command;
	hdr->in_words = (uint16_t)(req_len / 8);
	hdr->out_words = (uint16_t)(resp_len / 8);
	*ex = (struct ib_uverbs_ex_cmd_hdr){ .response = (uintptr_t)resp };
	memcpy(ex + 1, req, req_len);
	return shca_write_all(fd, buf, total);
}
