/* SPDX-License-Identifier: GPL-2.0-only */
/* softhca admin tool: RDMA netlink (NETLINK_RDMA, nldev) over libmnl. */
#ifndef SOFTHCA_TOOL_NL_H
#define SOFTHCA_TOOL_NL_H

#include <stdint.h>
#include <libmnl/libmnl.h>

struct nl {
	struct mnl_socket *sock;
	unsigned int portid;
	unsigned int seq;
	char buf[32768];	/* >= MNL_SOCKET_BUFFER_SIZE on 4K and 8K pages */
};

struct nl_dev {
	uint32_t index;
	char name[64];
	uint64_t guid;		/* host order */
	char fw[64];
	char protocol[16];
};

struct nl_port {
	uint32_t dev_index;
	uint32_t port;
	uint8_t state;
	uint8_t phys_state;
	char ndev[32];
};

int nl_open(struct nl *nl);
void nl_close(struct nl *nl);
/* Each returns 0 or a negative errno (the kernel's answer). */
int nl_newlink(struct nl *nl, const char *name, const char *type,
	       const char *ndev);
int nl_dellink(struct nl *nl, uint32_t index);
int nl_dump_devs(struct nl *nl, struct nl_dev **devs, int *n);
int nl_dump_ports(struct nl *nl, uint32_t dev_index, struct nl_port **ports,
		  int *n);

#endif
