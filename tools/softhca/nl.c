// SPDX-License-Identifier: GPL-2.0-only
/*
 * softhca admin tool: the RDMA netlink requests it needs, the same ones
 * iproute2's "rdma" tool sends (RDMA_NL_NLDEV family).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>

#include "nl.h"

int nl_open(struct nl *nl)
{
	nl->sock = mnl_socket_open(NETLINK_RDMA);
	if (!nl->sock)
		return -errno;
	if (mnl_socket_bind(nl->sock, 0, MNL_SOCKET_AUTOPID) < 0) {
		int err = -errno;

		mnl_socket_close(nl->sock);
		return err;
	}
	nl->portid = mnl_socket_get_portid(nl->sock);
	nl->seq = (unsigned int)time(NULL);
	return 0;
}

void nl_close(struct nl *nl)
{
	mnl_socket_close(nl->sock);
}

static struct nlmsghdr *nl_msg(struct nl *nl, int cmd, uint16_t flags)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(nl->buf);

	nlh->nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, cmd);
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	nlh->nlmsg_seq = ++nl->seq;
	return nlh;
}

/* Send @nlh and run @cb over every answer until the ack or dump end. */
static int nl_talk(struct nl *nl, struct nlmsghdr *nlh, mnl_cb_t cb,
		   void *data)
{
	unsigned int seq = nlh->nlmsg_seq;
	ssize_t len;
	int ret;

	if (mnl_socket_sendto(nl->sock, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	do {
		len = mnl_socket_recvfrom(nl->sock, nl->buf, sizeof(nl->buf));
		if (len < 0)
			return -errno;
		ret = mnl_cb_run(nl->buf, (size_t)len, seq, nl->portid, cb,
				 data);
	} while (ret > 0);
	return ret < 0 ? -errno : 0;
}

int nl_newlink(struct nl *nl, const char *name, const char *type,
	       const char *ndev)
{
	struct nlmsghdr *nlh = nl_msg(nl, RDMA_NLDEV_CMD_NEWLINK, NLM_F_ACK);

	mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_DEV_NAME, name);
	mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_LINK_TYPE, type);
	mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_NDEV_NAME, ndev);
	return nl_talk(nl, nlh, NULL, NULL);
}

int nl_dellink(struct nl *nl, uint32_t index)
{
	struct nlmsghdr *nlh = nl_msg(nl, RDMA_NLDEV_CMD_DELLINK, NLM_F_ACK);

	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, index);
	return nl_talk(nl, nlh, NULL, NULL);
}

struct attrs {
	const struct nlattr *tb[RDMA_NLDEV_ATTR_MAX];
};

static int attr_cb(const struct nlattr *attr, void *data)
{
	struct attrs *a = data;
	int type = mnl_attr_get_type(attr);

	if (type >= 0 && type < RDMA_NLDEV_ATTR_MAX)
		a->tb[type] = attr;
	return MNL_CB_OK;
}

static void copy_str(char *dst, size_t len, const struct nlattr *attr)
{
	dst[0] = '\0';
	if (attr) {
		strncpy(dst, mnl_attr_get_str(attr), len - 1);
		dst[len - 1] = '\0';
	}
}

struct vec {
	void *items;
	int n;
	size_t size;
	int err;
};

static void *vec_push(struct vec *v)
{
	void *grown = realloc(v->items, (size_t)(v->n + 1) * v->size);

	if (!grown) {
		v->err = -ENOMEM;
		return NULL;
	}
	v->items = grown;
	grown = (char *)grown + (size_t)v->n++ * v->size;
	memset(grown, 0, v->size);
	return grown;
}

static int dev_cb(const struct nlmsghdr *nlh, void *data)
{
	struct attrs a = {};
	struct nl_dev *d;

	mnl_attr_parse(nlh, 0, attr_cb, &a);
	if (!a.tb[RDMA_NLDEV_ATTR_DEV_INDEX] || !a.tb[RDMA_NLDEV_ATTR_DEV_NAME])
		return MNL_CB_OK;
	d = vec_push(data);
	if (!d)
		return MNL_CB_ERROR;
	d->index = mnl_attr_get_u32(a.tb[RDMA_NLDEV_ATTR_DEV_INDEX]);
	copy_str(d->name, sizeof(d->name), a.tb[RDMA_NLDEV_ATTR_DEV_NAME]);
	copy_str(d->fw, sizeof(d->fw), a.tb[RDMA_NLDEV_ATTR_FW_VERSION]);
	copy_str(d->protocol, sizeof(d->protocol),
		 a.tb[RDMA_NLDEV_ATTR_DEV_PROTOCOL]);
	if (a.tb[RDMA_NLDEV_ATTR_NODE_GUID])
		d->guid = mnl_attr_get_u64(a.tb[RDMA_NLDEV_ATTR_NODE_GUID]);
	return MNL_CB_OK;
}

static int port_cb(const struct nlmsghdr *nlh, void *data)
{
	struct attrs a = {};
	struct nl_port *p;

	mnl_attr_parse(nlh, 0, attr_cb, &a);
	if (!a.tb[RDMA_NLDEV_ATTR_DEV_INDEX] || !a.tb[RDMA_NLDEV_ATTR_PORT_INDEX])
		return MNL_CB_OK;
	p = vec_push(data);
	if (!p)
		return MNL_CB_ERROR;
	p->dev_index = mnl_attr_get_u32(a.tb[RDMA_NLDEV_ATTR_DEV_INDEX]);
	p->port = mnl_attr_get_u32(a.tb[RDMA_NLDEV_ATTR_PORT_INDEX]);
	if (a.tb[RDMA_NLDEV_ATTR_PORT_STATE])
		p->state = mnl_attr_get_u8(a.tb[RDMA_NLDEV_ATTR_PORT_STATE]);
	if (a.tb[RDMA_NLDEV_ATTR_PORT_PHYS_STATE])
		p->phys_state =
			mnl_attr_get_u8(a.tb[RDMA_NLDEV_ATTR_PORT_PHYS_STATE]);
	copy_str(p->ndev, sizeof(p->ndev), a.tb[RDMA_NLDEV_ATTR_NDEV_NAME]);
	return MNL_CB_OK;
}

static int nl_dump(struct nl *nl, struct nlmsghdr *nlh, mnl_cb_t cb,
		   size_t size, void **items, int *n)
{
	struct vec v = { .size = size };
	int ret;

	ret = nl_talk(nl, nlh, cb, &v);
	if (!ret && v.err)
		ret = v.err;
	if (ret) {
		free(v.items);
		return ret;
	}
	*items = v.items;
	*n = v.n;
	return 0;
}

int nl_dump_devs(struct nl *nl, struct nl_dev **devs, int *n)
{
	return nl_dump(nl, nl_msg(nl, RDMA_NLDEV_CMD_GET, NLM_F_DUMP), dev_cb,
		       sizeof(**devs), (void **)devs, n);
}

int nl_dump_ports(struct nl *nl, uint32_t dev_index, struct nl_port **ports,
		  int *n)
{
	struct nlmsghdr *nlh = nl_msg(nl, RDMA_NLDEV_CMD_PORT_GET, NLM_F_DUMP);

	/* The kernel dumps the ports of one device at a time. */
	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, dev_index);
	return nl_dump(nl, nlh, port_cb, sizeof(**ports), (void **)ports, n);
}
