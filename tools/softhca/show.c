// SPDX-License-Identifier: GPL-2.0-only
/*
 * softhca admin tool: "softhca show [NAME]".
 *
 * Devices and port states come from RDMA netlink; the active MTU from
 * libsofthca (ibv_query_port); the GID table from sysfs, where ib_core
 * publishes it.  Only softhca devices are listed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <infiniband/verbs.h>

#include "tool.h"

static int read_attr(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return -1;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

bool tool_is_softhca(const char *ibdev)
{
	char path[256], buf[32];

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/hca_type", ibdev);
	return !read_attr(path, buf, sizeof(buf)) && !strcmp(buf, "softhca");
}

static const char *port_state(unsigned int s)
{
	static const char *const names[] = {
		"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER",
	};

	return s < sizeof(names) / sizeof(names[0]) ? names[s] : "UNKNOWN";
}

static const char *phys_state(unsigned int s)
{
	static const char *const names[] = {
		"NOP", "SLEEP", "POLLING", "DISABLED", "TRAINING", "LINK_UP",
		"LINK_ERROR_RECOVERY", "PHY_TEST",
	};

	return s < sizeof(names) / sizeof(names[0]) ? names[s] : "UNKNOWN";
}

static int mtu_bytes(enum ibv_mtu m)
{
	return m >= IBV_MTU_256 && m <= IBV_MTU_4096 ? 128 << m : 0;
}

/* Active MTU through the verbs API; 0 when the device cannot be opened. */
static int active_mtu(const char *ibdev, int port)
{
	struct ibv_device **list;
	struct ibv_port_attr attr;
	struct ibv_context *ctx;
	int i, mtu = 0;

	list = ibv_get_device_list(NULL);
	if (!list)
		return 0;
	for (i = 0; list[i]; i++) {
		if (strcmp(ibv_get_device_name(list[i]), ibdev))
			continue;
		ctx = ibv_open_device(list[i]);
		if (ctx) {
			if (!ibv_query_port(ctx, (uint8_t)port, &attr))
				mtu = mtu_bytes(attr.active_mtu);
			ibv_close_device(ctx);
		}
		break;
	}
	ibv_free_device_list(list);
	return mtu;
}

static void show_gids(const char *ibdev, unsigned int port)
{
	char path[256], buf[64], type[32], text[INET6_ADDRSTRLEN];
	struct in6_addr a;
	unsigned int w[8];
	int i, j;

	for (i = 0;; i++) {
		snprintf(path, sizeof(path),
			 "/sys/class/infiniband/%s/ports/%u/gids/%d", ibdev,
			 port, i);
		if (read_attr(path, buf, sizeof(buf)))
			break;
		if (sscanf(buf, "%x:%x:%x:%x:%x:%x:%x:%x", &w[0], &w[1],
			   &w[2], &w[3], &w[4], &w[5], &w[6], &w[7]) != 8)
			continue;
		for (j = 0; j < 8; j++) {
			a.s6_addr[2 * j] = (uint8_t)(w[j] >> 8);
			a.s6_addr[2 * j + 1] = (uint8_t)w[j];
		}
		if (IN6_IS_ADDR_UNSPECIFIED(&a))
			continue;
		snprintf(path, sizeof(path),
			 "/sys/class/infiniband/%s/ports/%u/gid_attrs/types/%d",
			 ibdev, port, i);
		if (read_attr(path, type, sizeof(type)))
			strcpy(type, "?");
		if (IN6_IS_ADDR_V4MAPPED(&a))
			inet_ntop(AF_INET, &a.s6_addr[12], text, sizeof(text));
		else
			inet_ntop(AF_INET6, &a, text, sizeof(text));
		printf("    gid %d %s %s\n", i, text, type);
	}
}

static int show_dev(struct nl *nl, const struct nl_dev *d)
{
	struct nl_port *ports, *p;
	int i, mtu, nports, err;

	err = nl_dump_ports(nl, d->index, &ports, &nports);
	if (err)
		return err;

	printf("%s: node_guid %04x:%04x:%04x:%04x fw %s protocol %s\n",
	       d->name, (unsigned int)(d->guid >> 48) & 0xffff,
	       (unsigned int)(d->guid >> 32) & 0xffff,
	       (unsigned int)(d->guid >> 16) & 0xffff,
	       (unsigned int)d->guid & 0xffff, d->fw,
	       d->protocol[0] ? d->protocol : "?");
	for (i = 0; i < nports; i++) {
		p = &ports[i];
		if (p->dev_index != d->index)
			continue;
		mtu = active_mtu(d->name, (int)p->port);
		printf("  port %u: state %s physical_state %s netdev %s",
		       p->port, port_state(p->state), phys_state(p->phys_state),
		       p->ndev[0] ? p->ndev : "-");
		if (mtu)
			printf(" mtu %d\n", mtu);
		else
			printf(" mtu ?\n");
		show_gids(d->name, p->port);
	}
	free(ports);
	return 0;
}

int tool_show(struct nl *nl, const char *name)
{
	struct nl_dev *devs = NULL;
	int ndevs, i, err, shown = 0;

	err = nl_dump_devs(nl, &devs, &ndevs);
	if (err)
		return tool_fail("show", "show", -err);
	for (i = 0; i < ndevs; i++) {
		if (name && strcmp(devs[i].name, name))
			continue;
		if (!tool_is_softhca(devs[i].name))
			continue;
		err = show_dev(nl, &devs[i]);
		/* A device deleted since the dump is not an error. */
		if (err && err != -ENODEV) {
			free(devs);
			return tool_fail("show", "show", -err);
		}
		shown += !err;
	}
	free(devs);
	if (name && !shown) {
		fprintf(stderr, "softhca: show %s: no such softhca device\n",
			name);
		return 1;
	}
	return 0;
}
