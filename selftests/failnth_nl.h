/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * RDMA netlink by hand for the fault-injection sweeps (failnth.c):
 * device lookup, object counters, link add and delete.
 * Included once, in order, by failnth.c.
 */
#ifndef SOFTHCA_SELFTEST_FAILNTH_NL_H
#define SOFTHCA_SELFTEST_FAILNTH_NL_H

/* ---------------------------------------------------------------------
 * RDMA netlink, by hand: device lookup, object counters, link add/delete
 */

static int nl_fd = -1;
static uint32_t nl_seq;
static int nl_recv_err;	/* nl_answer()'s error came from recv() */

struct nlbuf {
	struct nlmsghdr h;
	char data[1024];
};

static void nl_init(struct nlbuf *b, int cmd, int flags)
{
	memset(b, 0, sizeof(*b));
	b->h.nlmsg_len = NLMSG_HDRLEN;
	b->h.nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, cmd);
	b->h.nlmsg_flags = (uint16_t)(NLM_F_REQUEST | flags);
	b->h.nlmsg_seq = ++nl_seq;
}

static void nl_put(struct nlbuf *b, int type, const void *val, size_t len)
{
	struct nlattr *a = (void *)((char *)b + NLMSG_ALIGN(b->h.nlmsg_len));

	a->nla_type = (uint16_t)type;
	a->nla_len = (uint16_t)(NLA_HDRLEN + len);
	memcpy((char *)a + NLA_HDRLEN, val, len);
	b->h.nlmsg_len = NLMSG_ALIGN(b->h.nlmsg_len) + NLA_ALIGN(a->nla_len);
}

static void nl_put_str(struct nlbuf *b, int type, const char *s)
{
	nl_put(b, type, s, strlen(s) + 1);
}

static int nl_open(void)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct timeval tv = { .tv_sec = 10 };

	nl_fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_RDMA);
	if (nl_fd < 0 || bind(nl_fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    setsockopt(nl_fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)))
		return -1;
	return 0;
}

static int nl_send(struct nlbuf *b)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };

	if (sendto(nl_fd, b, b->h.nlmsg_len, 0, (struct sockaddr *)&sa,
		   sizeof(sa)) < 0)
		return errno;
	return 0;
}

/* Attributes of one message (top level or a nest), by type. */
static void nl_parse(const void *p, int len, const struct nlattr **tb, int max)
{
	const struct nlattr *a = p;

	memset(tb, 0, sizeof(*tb) * (size_t)max);
	while (len >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN &&
	       a->nla_len <= len) {
		int type = a->nla_type & NLA_TYPE_MASK;

		if (type < max)
			tb[type] = a;
		len -= NLA_ALIGN(a->nla_len);
		a = (const void *)((const char *)a + NLA_ALIGN(a->nla_len));
	}
}

#define NLA_DATA(a) ((const char *)(a) + NLA_HDRLEN)

/*
 * Read the answers to request @seq until its ACK, error or DONE, handing
 * each data message to @fn.  Returns 0 or a positive errno (the request's
 * error, or what recv() said).
 */
static int nl_answer(uint32_t seq, void (*fn)(const struct nlmsghdr *, void *),
		     void *arg)
{
	static char buf[32768];

	nl_recv_err = 0;
	for (;;) {
		ssize_t n = recv(nl_fd, buf, sizeof(buf), 0);
		struct nlmsghdr *h = (void *)buf;
		int len = (int)n;

		if (n < 0) {
			nl_recv_err = 1;
			return errno;
		}
		for (; NLMSG_OK(h, (unsigned int)len); h = NLMSG_NEXT(h, len)) {
			if (h->nlmsg_seq != seq)
				continue;
			if (h->nlmsg_type == NLMSG_ERROR)
				return -((struct nlmsgerr *)NLMSG_DATA(h))->error;
			if (h->nlmsg_type == NLMSG_DONE)
				return 0;
			if (fn)
				fn(h, arg);
			if (!(h->nlmsg_flags & NLM_F_MULTI))
				return 0;
		}
	}
}

struct dev_find {
	const char *name;
	uint32_t index;
	int found;
};

static void dev_find_one(const struct nlmsghdr *h, void *arg)
{
	const struct nlattr *tb[RDMA_NLDEV_ATTR_MAX];
	struct dev_find *f = arg;

	nl_parse(NLMSG_DATA(h), (int)(h->nlmsg_len - NLMSG_HDRLEN), tb,
		 RDMA_NLDEV_ATTR_MAX);
	if (tb[RDMA_NLDEV_ATTR_DEV_NAME] && tb[RDMA_NLDEV_ATTR_DEV_INDEX] &&
	    !strcmp(NLA_DATA(tb[RDMA_NLDEV_ATTR_DEV_NAME]), f->name)) {
		memcpy(&f->index, NLA_DATA(tb[RDMA_NLDEV_ATTR_DEV_INDEX]), 4);
		f->found = 1;
	}
}

/* The index of RDMA device @name: 0 and *index, or ENODEV, or an errno. */
static int dev_index(const char *name, uint32_t *index)
{
	struct dev_find f = { .name = name };
	struct nlbuf b;
	int err;

	nl_init(&b, RDMA_NLDEV_CMD_GET, NLM_F_DUMP);
	err = nl_send(&b);
	if (!err)
		err = nl_answer(b.h.nlmsg_seq, dev_find_one, &f);
	if (err)
		return err;
	if (!f.found)
		return ENODEV;
	*index = f.index;
	return 0;
}

/* The counters "rdma resource show" prints for a device. */
static const char *const res_names[] = { "pd", "cq", "qp", "mr", "srq", "ctx" };
#define NRES (sizeof(res_names) / sizeof(res_names[0]))
#define RES_QP 2	/* res_names[RES_QP] is "qp" */

static void res_one(const struct nlmsghdr *h, void *arg)
{
	const struct nlattr *tb[RDMA_NLDEV_ATTR_MAX], *e, *sum;
	long *res = arg;
	int left;

	nl_parse(NLMSG_DATA(h), (int)(h->nlmsg_len - NLMSG_HDRLEN), tb,
		 RDMA_NLDEV_ATTR_MAX);
	sum = tb[RDMA_NLDEV_ATTR_RES_SUMMARY];
	if (!sum)
		return;
	left = sum->nla_len - NLA_HDRLEN;
	for (e = (const void *)NLA_DATA(sum);
	     left >= NLA_HDRLEN && e->nla_len >= NLA_HDRLEN;
	     left -= NLA_ALIGN(e->nla_len),
	     e = (const void *)((const char *)e + NLA_ALIGN(e->nla_len))) {
		const struct nlattr *et[RDMA_NLDEV_ATTR_MAX];
		uint64_t v;
		size_t i;

		nl_parse(NLA_DATA(e), e->nla_len - NLA_HDRLEN, et,
			 RDMA_NLDEV_ATTR_MAX);
		if (!et[RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_NAME] ||
		    !et[RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_CURR])
			continue;
		memcpy(&v, NLA_DATA(et[RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_CURR]),
		       8);
		for (i = 0; i < NRES; i++)
			if (!strcmp(NLA_DATA(et[RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_NAME]),
				    res_names[i]))
				res[i] = (long)v;
	}
}

static int res_get(uint32_t index, long *res)
{
	struct nlbuf b;
	size_t i;
	int err;

	for (i = 0; i < NRES; i++)
		res[i] = -1;
	nl_init(&b, RDMA_NLDEV_CMD_RES_GET, 0);
	nl_put(&b, RDMA_NLDEV_ATTR_DEV_INDEX, &index, 4);
	err = nl_send(&b);
	return err ? err : nl_answer(b.h.nlmsg_seq, res_one, res);
}

/* The NEWLINK request of "rdma link add", built before the fault is armed. */
static void newlink_msg(struct nlbuf *b, const char *name, const char *ndev)
{
	nl_init(b, RDMA_NLDEV_CMD_NEWLINK, NLM_F_ACK);
	nl_put_str(b, RDMA_NLDEV_ATTR_DEV_NAME, name);
	nl_put_str(b, RDMA_NLDEV_ATTR_LINK_TYPE, "softhca");
	nl_put_str(b, RDMA_NLDEV_ATTR_NDEV_NAME, ndev);
}

static int dellink(const char *name)
{
	uint32_t index;
	struct nlbuf b;
	int err = dev_index(name, &index);

	if (err)
		return err;
	nl_init(&b, RDMA_NLDEV_CMD_DELLINK, NLM_F_ACK);
	nl_put(&b, RDMA_NLDEV_ATTR_DEV_INDEX, &index, 4);
	err = nl_send(&b);
	return err ? err : nl_answer(b.h.nlmsg_seq, NULL, NULL);
}

#endif
