// SPDX-License-Identifier: GPL-2.0-only
/*
 * softhca: administer softhca devices.
 *
 *   softhca link add NAME netdev IF
 *   softhca link del NAME
 *   softhca show [NAME]
 *
 * Devices are created and deleted over RDMA netlink (the kernel's nldev
 * interface, as "rdma link" does); "show" adds what netlink does not
 * carry (active MTU, GIDs) from libsofthca and sysfs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nl.h"
#include "tool.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: softhca link add NAME netdev IF\n"
		"       softhca link del NAME\n"
		"       softhca show [NAME]\n"
		"       softhca help\n");
}

/* The kernel answers with an errno; say what it means for this tool. */
static const char *hint(int err, const char *op)
{
	switch (err) {
	case EEXIST:
		return "the device name is taken or the netdev already has a softhca device";
	case ENODEV:
		return strcmp(op, "add") ? "no such RDMA device" : "no such netdev";
	case EOPNOTSUPP:
		return "softhca cannot bind to that netdev (VLAN devices are not supported; use the real device)";
	case EINVAL:
		return strcmp(op, "add") ? "invalid request" :
		       "invalid name or netdev (softhca needs an Ethernet netdev; names may not contain '%')";
	case EPERM:
		return "permission denied (needs CAP_NET_ADMIN)";
	case EPROTONOSUPPORT:
		return "the kernel has no RDMA netlink (load ib_core)";
	default:
		return NULL;
	}
}

int tool_fail(const char *what, const char *op, int err)
{
	const char *h = hint(err, op);

	fprintf(stderr, "softhca: %s: %s%s%s\n", what, strerror(err),
		h ? ": " : "", h ? h : "");
	return 1;
}

int tool_find_dev(struct nl *nl, const char *name, struct nl_dev *out)
{
	struct nl_dev *devs;
	int n, i, err;

	err = nl_dump_devs(nl, &devs, &n);
	if (err)
		return err;
	err = -ENODEV;
	for (i = 0; i < n; i++) {
		if (!strcmp(devs[i].name, name)) {
			*out = devs[i];
			err = 0;
			break;
		}
	}
	free(devs);
	return err;
}

static int cmd_link(struct nl *nl, int argc, char **argv)
{
	char what[128];
	struct nl_dev dev;
	int err;

	if (argc == 5 && !strcmp(argv[1], "add") && !strcmp(argv[3], "netdev")) {
		snprintf(what, sizeof(what), "link add %s netdev %s", argv[2],
			 argv[4]);
		err = nl_newlink(nl, argv[2], "softhca", argv[4]);
		return err ? tool_fail(what, "add", -err) : 0;
	}
	if (argc == 3 && (!strcmp(argv[1], "del") ||
			  !strcmp(argv[1], "delete"))) {
		snprintf(what, sizeof(what), "link del %s", argv[2]);
		err = tool_find_dev(nl, argv[2], &dev);
		if (!err && !tool_is_softhca(dev.name))
			err = -ENODEV;
		if (!err)
			err = nl_dellink(nl, dev.index);
		return err ? tool_fail(what, "del", -err) : 0;
	}
	usage(stderr);
	return 2;
}

int main(int argc, char **argv)
{
	struct nl nl;
	int err, ret;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "link") && strcmp(argv[1], "show")) {
		fprintf(stderr, "softhca: unknown command '%s'\n", argv[1]);
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "show") && argc > 3) {
		usage(stderr);
		return 2;
	}

	err = nl_open(&nl);
	if (err)
		return tool_fail("netlink", "open", -err);
	if (!strcmp(argv[1], "link"))
		ret = cmd_link(&nl, argc - 1, argv + 1);
	else
		ret = tool_show(&nl, argc > 2 ? argv[2] : NULL);
	nl_close(&nl);
	return ret;
}
