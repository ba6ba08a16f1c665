/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * "rdma link add" under fault injection (failnth.c).
 * Included once, in order, by failnth.c.
 */
#ifndef SOFTHCA_SELFTEST_FAILNTH_LINK_H
#define SOFTHCA_SELFTEST_FAILNTH_LINK_H

static int link_no_node;	/* the attempt's device had no uverbs node */

static int link_exists(void)
{
	uint32_t i;

	return dev_index(LINK_NAME, &i) == 0 ||
	       access("/sys/class/infiniband/" LINK_NAME, F_OK) == 0;
}

static int link_prep(void)
{
	newlink_msg(&link_msg, LINK_NAME, link_ndev);
	return 0;
}

static int link_err_recv;	/* the error came from recv(): the reply */

static int link_call(void)
{
	int err = nl_send(&link_msg);

	link_err_recv = 0;
	if (err)
		return err;
	err = nl_answer(link_msg.h.nlmsg_seq, NULL, NULL);
	link_err_recv = err == ENOBUFS && nl_recv_err;
	return err;
}

static int link_delete(void)
{
	int err = dellink(LINK_NAME), i;

	if (err) {
		printf("# link delete: %s\n", strerror(err));
		return -1;
	}
	for (i = 0; i < 100 && link_exists(); i++)
		usleep(50000);
	if (link_exists()) {
		printf("# " LINK_NAME " still there after delete\n");
		return -1;
	}
	return 0;
}

static int link_failed(void)
{
	int made = link_exists();

	link_no_node = 0;
	if (link_err_recv) {
		/* The reply, not the request, was lost. */
		link_ack_lost++;
		link_ack_lost_made += made;
		return made ? link_delete() : 0;
	}
	if (!made)
		return 0;
	printf("# link add failed, but " LINK_NAME " exists\n");
	link_delete();
	return -1;
}

static int link_use(void)
{
	struct ibv_device **l;
	struct ibv_context *c = NULL;
	union ibv_gid g;
	int i, bad;

	/* GID 0 comes from ib_core's GID worker, after registration. */
	l = ibv_get_device_list(NULL);
	for (i = 0; l && l[i]; i++)
		if (!strcmp(ibv_get_device_name(l[i]), LINK_NAME))
			c = ibv_open_device(l[i]);
	ibv_free_device_list(l);
	if (!c) {
		printf("# cannot open " LINK_NAME ": %s\n", strerror(errno));
		return -1;
	}
	for (i = 0; i < 100; i++) {
		if (!ibv_query_gid(c, 1, 0, &g) &&
		    (g.global.subnet_prefix || g.global.interface_id))
			break;
		usleep(50000);
	}
	bad = loopback_send(c);
	ibv_close_device(c);
	return bad;
}

/*
 * ib_mad made the device's GSI QP (QP1): its add (ib_mad_init_device())
 * did not fail.  ib_core ignores a failed client add, as for uverbs.
 * Nothing else makes a QP on a device just added, so its QP count (the
 * restrack summary, over netlink in this process: a popen of "rdma
 * resource show" cost a fork and two execs per attempt) tells.
 */
static int has_gsi(const char *ibdev)
{
	long res[NRES];
	uint32_t index;

	if (dev_index(ibdev, &index) || res_get(index, res))
		return 0;
	return res[RES_QP] >= 1;
}

/* Whether ib_uverbs gave device @ibdev its character device. */
static int has_uverbs(const char *ibdev)
{
	DIR *d = opendir("/sys/class/infiniband_verbs");
	struct dirent *de;
	char path[300], name[64];
	int found = 0;
	FILE *f;

	while (d && (de = readdir(d)) && !found) {
		if (strncmp(de->d_name, "uverbs", 6))
			continue;
		snprintf(path, sizeof(path), "/sys/class/infiniband_verbs/%s/ibdev",
			 de->d_name);
		f = fopen(path, "re");
		if (f && fgets(name, sizeof(name), f))
			found = !strncmp(name, ibdev, strlen(ibdev)) &&
				!strcmp(name + strlen(ibdev), "\n");
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
	return found;
}

/*
 * The parts of a registration sampled (see TEST(rdma_link_add)): runs of
 * ib_core code that never call the driver, known from the fault's stack
 * (step_key()).  ib_uverbs_add_one() runs once per registration; an
 * attribute group's sysfs files (internal_create_group()) and QP1's
 * receive buffers (ib_mad_post_receive_mads(), whose ib_post_recv()
 * into softhca allocates nothing) are keyed by their call path, which
 * is in no loop that also calls the driver: ib_core's loops over ports
 * are (setup_port() asks the driver for each port's counters), and a
 * softhca device has one port.  A fault that left the device without
 * its uverbs node but printed no stack (__GFP_NOWARN) was inside
 * ib_uverbs_add_one() too: ib_core ignores only a client's failure.
 */
static unsigned long link_in_region(void)
{
	unsigned long key = step_key(&fault_stack, "ib_uverbs_add_one", 1);

	if (!key && link_no_node && !fault_stack.n)
		key = step_key_of("ib_uverbs_add_one");
	if (!key)
		key = step_key(&fault_stack, "internal_create_group", 0);
	if (!key)
		key = step_key(&fault_stack, "ib_mad_post_receive_mads", 0);
	return key;
}

static int link_done(int keep)
{
	int bad = 0;

	link_no_node = 0;
	if (!link_exists()) {
		printf("# link add succeeded, but no " LINK_NAME "\n");
		return -1;
	}
	/*
	 * ib_core registers a device even when a client's add fails (the
	 * error is ignored by design): counted, not failed.  Only
	 * ib_uverbs_add_one()'s failure leaves the device without its
	 * uverbs node, only ib_mad's without its GSI QP (link_in_region()
	 * takes the first as evidence where the fault printed no stack).
	 */
	if (!keep && !has_uverbs(LINK_NAME))
		link_no_uverbs++, link_no_node = 1;
	else if (!keep && !has_gsi(LINK_NAME))
		link_no_gsi++;
	if (keep)
		bad = link_use();
	return bad | link_delete();
}

#endif
