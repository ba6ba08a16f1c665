// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * libsofthca: ib_uverbs commands over write().
 *
 * A legacy command is one write() of a struct ib_uverbs_cmd_hdr followed
 * by the command struct (whose first field is the user address of the
 * response buffer) and any driver data.  in_words counts 32-bit words of
 * the whole write, out_words of the response buffer.  ib_uverbs hands the
 * driver whatever follows the core command/response as its udata.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

#define SHCA_CMD_MAX 512

static int shca_write(int fd, uint32_t command, const void *req,
		      size_t req_len, const void *resp, size_t resp_len)
{
	uint64_t buf[SHCA_CMD_MAX / 8];
	struct ib_uverbs_cmd_hdr *hdr = (void *)buf;
	size_t total = sizeof(*hdr) + req_len;
	uint64_t response = (uintptr_t)resp;
	ssize_t n;

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

	n = write(fd, buf, total);
	if (n < 0)
		return errno;
	if ((size_t)n != total)
		return EIO;
	return 0;
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
