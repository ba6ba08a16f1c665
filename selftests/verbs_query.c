// SPDX-License-Identifier: GPL-2.0-only
/*
 * Device discovery and queries through libsofthca, against a device the
 * calling script created: SOFTHCA_DEV names it, SOFTHCA_NETDEV its
 * netdev.  Checks every answer against what the kernel's netdev says.
 */
#include <fcntl.h>
#include <signal.h>
#include <setjmp.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>
#include <endian.h>
#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

#include "rdma/softhca-abi.h"
#include "tap.h"
#include "util.h"

static const char *dev_name_env(void)
{
	const char *n = getenv("SOFTHCA_DEV");

	return n ? n : "sh0";
}

static long netdev_long(const char *attr)
{
	char path[128], buf[64];
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/net/%s/%s",
		 getenv("SOFTHCA_NETDEV") ? getenv("SOFTHCA_NETDEV") : "sv0",
		 attr);
	f = fopen(path, "r");
	if (!f || !fgets(buf, sizeof(buf), f))
		return -1;
	fclose(f);
	return strtol(buf, NULL, 0);
}

static struct ibv_device *find_dev(struct ibv_device **list)
{
	for (int i = 0; list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), dev_name_env()))
			return list[i];
	return NULL;
}

TEST(device_list_finds_device)
{
	struct ibv_device **list;
	int n = -1;

	list = ibv_get_device_list(&n);
	REQUIRE(list, "ibv_get_device_list");
	CHECK(n >= 1, "n=%d", n);
	CHECK(list[n] == NULL, "list not NULL-terminated");
	CHECK(find_dev(list), "%s not listed", dev_name_env());
	for (int i = 0; i < n; i++) {
		CHECK(list[i]->node_type == IBV_NODE_CA, "node type");
		CHECK(!strncmp(list[i]->dev_name, "uverbs", 6), "dev_name %s",
		      list[i]->dev_name);
	}
	ibv_free_device_list(list);
}

TEST(device_guid_matches_sysfs)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_device *dev;
	char path[256], buf[64], want[64];
	uint64_t g;
	FILE *f;

	REQUIRE(list, "list");
	dev = find_dev(list);
	REQUIRE(dev, "device");
	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/node_guid",
		 ibv_get_device_name(dev));
	f = fopen(path, "r");
	REQUIRE(f && fgets(buf, sizeof(buf), f), "read %s", path);
	fclose(f);
	g = be64toh(ibv_get_device_guid(dev));
	snprintf(want, sizeof(want), "%04x:%04x:%04x:%04x\n",
		 (unsigned int)(g >> 48) & 0xffff,
		 (unsigned int)(g >> 32) & 0xffff,
		 (unsigned int)(g >> 16) & 0xffff, (unsigned int)g & 0xffff);
	CHECK(!strcmp(buf, want), "sysfs %s lib %s", buf, want);
	CHECK(g != 0, "zero guid");
	ibv_free_device_list(list);
}

static struct ibv_context *open_dev(void)
{
	return open_by_name(dev_name_env());
}

TEST(open_query_device)
{
	struct ibv_context *ctx = open_dev();
	struct ibv_device_attr attr;
	int ret;

	REQUIRE(ctx, "ibv_open_device");
	memset(&attr, 0xa5, sizeof(attr));
	ret = ibv_query_device(ctx, &attr);
	CHECK(ret == 0, "ibv_query_device=%d", ret);
	CHECK(attr.phys_port_cnt == 1, "ports %u", attr.phys_port_cnt);
	CHECK(attr.node_guid == ibv_get_device_guid(ctx->device), "guid");
	CHECK(attr.sys_image_guid == attr.node_guid, "sys image guid");
	CHECK(attr.max_pd > 0, "max_pd %d", attr.max_pd);
	CHECK(attr.max_pkeys == 1, "max_pkeys %u", attr.max_pkeys);
	CHECK(!strcmp(attr.fw_ver, "0.1.0"), "fw_ver '%s'", attr.fw_ver);
	CHECK(ctx->async_fd >= 0, "async fd");
	CHECK(ctx->num_comp_vectors >= 1, "comp vectors %d",
	      ctx->num_comp_vectors);
	CHECK(ibv_close_device(ctx) == 0, "close");
}

static enum ibv_mtu expected_mtu(long netdev_mtu)
{
	long payload = netdev_mtu - 88;

	if (payload >= 4096)
		return IBV_MTU_4096;
	if (payload >= 2048)
		return IBV_MTU_2048;
	if (payload >= 1024)
		return IBV_MTU_1024;
	if (payload >= 512)
		return IBV_MTU_512;
	return IBV_MTU_256;
}

TEST(query_port_follows_netdev)
{
	struct ibv_context *ctx = open_dev();
	struct ibv_port_attr pa;
	int ret;

	REQUIRE(ctx, "open");
	ret = ibv_query_port(ctx, 1, &pa);
	CHECK(ret == 0, "ibv_query_port=%d", ret);
	CHECK(pa.state == IBV_PORT_ACTIVE, "state %d", pa.state);
	CHECK(pa.phys_state == 5, "phys_state %u", pa.phys_state);
	CHECK(pa.link_layer == IBV_LINK_LAYER_ETHERNET, "link layer %u",
	      pa.link_layer);
	CHECK(pa.max_mtu == IBV_MTU_4096, "max_mtu %d", pa.max_mtu);
	CHECK(pa.active_mtu == expected_mtu(netdev_long("mtu")),
	      "active_mtu %d for netdev mtu %ld", pa.active_mtu,
	      netdev_long("mtu"));
	CHECK(pa.gid_tbl_len > 0, "gid table %d", pa.gid_tbl_len);
	CHECK(pa.pkey_tbl_len == 1, "pkey table %u", pa.pkey_tbl_len);
	CHECK(pa.lid == 0, "RoCE has no LID, got %u", pa.lid);

	ret = ibv_query_port(ctx, 2, &pa);
	CHECK(ret == EINVAL, "port 2 gave %d", ret);
	ret = ibv_query_port(ctx, 0, &pa);
	CHECK(ret == EINVAL, "port 0 gave %d", ret);
	ibv_close_device(ctx);
}

TEST(query_gid_has_link_local_and_ipv4)
{
	struct ibv_context *ctx = open_dev();
	struct ibv_port_attr pa;
	union ibv_gid gid;
	const char *want4 = getenv("SOFTHCA_IPV4");
	struct in_addr a4;
	int found_ll = 0, found_v4 = 0;

	REQUIRE(ctx, "open");
	REQUIRE(ibv_query_port(ctx, 1, &pa) == 0, "port");
	if (want4)
		inet_pton(AF_INET, want4, &a4);
	for (int i = 0; i < pa.gid_tbl_len; i++) {
		if (ibv_query_gid(ctx, 1, i, &gid))
			continue;
		if (gid.raw[0] == 0xfe && gid.raw[1] == 0x80)
			found_ll = 1;
		if (want4 && gid.raw[10] == 0xff && gid.raw[11] == 0xff &&
		    !memcmp(&gid.raw[12], &a4, 4))
			found_v4 = 1;
	}
	CHECK(found_ll, "no fe80:: GID");
	if (want4)
		CHECK(found_v4, "no GID for %s", want4);
	errno = 0;
	CHECK(ibv_query_gid(ctx, 1, pa.gid_tbl_len, &gid) == -1 &&
	      errno == EINVAL, "index past table");
	CHECK(ibv_query_gid(ctx, 2, 0, &gid) == -1, "port 2");
	ibv_close_device(ctx);
}

TEST(query_pkey)
{
	struct ibv_context *ctx = open_dev();
	__be16 pkey = 0;

	REQUIRE(ctx, "open");
	CHECK(ibv_query_pkey(ctx, 1, 0, &pkey) == 0, "pkey 0");
	CHECK(pkey == htons(0xffff), "pkey %#x", ntohs(pkey));
	CHECK(ibv_query_pkey(ctx, 1, 1, &pkey) == -1, "pkey 1 exists?");
	ibv_close_device(ctx);
}

TEST(alloc_dealloc_pd)
{
	struct ibv_context *ctx = open_dev();
	struct ibv_pd *pd[16];

	REQUIRE(ctx, "open");
	for (int i = 0; i < 16; i++) {
		pd[i] = ibv_alloc_pd(ctx);
		CHECK(pd[i], "alloc pd %d", i);
	}
	for (int i = 0; i < 16; i++)
		if (pd[i])
			CHECK(ibv_dealloc_pd(pd[i]) == 0, "dealloc %d", i);
	ibv_close_device(ctx);
}

/* Raw GET_CONTEXT on the uverbs node, bypassing the library. */
static int raw_get_context(const char *uverbs, const void *drv, size_t drv_len)
{
	char path[64];
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_get_context cmd;
		uint8_t drv[16];
	} __attribute__((packed)) req;
	struct {
		struct ib_uverbs_get_context_resp core;
		struct softhca_alloc_ucontext_resp drv;
	} resp;
	int fd, ret;

	snprintf(path, sizeof(path), "/dev/infiniband/%s", uverbs);
	fd = open(path, O_RDWR);
	if (fd < 0)
		return -errno;
	memset(&req, 0, sizeof(req));
	if (drv_len)
		memcpy(req.drv, drv, drv_len);
	req.hdr.command = IB_USER_VERBS_CMD_GET_CONTEXT;
	req.hdr.in_words = (sizeof(req.hdr) + sizeof(req.cmd) + drv_len) / 4;
	req.hdr.out_words = sizeof(resp) / 4;
	req.cmd.response = (uintptr_t)&resp;
	ret = write(fd, &req, req.hdr.in_words * 4) < 0 ? -errno : 0;
	if (!ret)
		close((int)resp.core.async_fd);
	close(fd);
	return ret;
}

TEST(abi_mismatch_is_refused)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct softhca_alloc_ucontext_req req = { 0 };
	struct ibv_device *dev;

	REQUIRE(list, "list");
	dev = find_dev(list);
	REQUIRE(dev, "dev");
	req.abi_version = SOFTHCA_UVERBS_ABI_VERSION + 1;
	CHECK(raw_get_context(dev->dev_name, &req, sizeof(req)) == -EPROTO,
	      "wrong abi");
	CHECK(raw_get_context(dev->dev_name, NULL, 0) == -EPROTO,
	      "no driver data");
	req.abi_version = SOFTHCA_UVERBS_ABI_VERSION;
	req.reserved = 1;
	CHECK(raw_get_context(dev->dev_name, &req, sizeof(req)) == -EINVAL,
	      "reserved field set");
	req.reserved = 0;
	CHECK(raw_get_context(dev->dev_name, &req, sizeof(req)) == 0,
	      "right abi");
	ibv_free_device_list(list);
}

static sigjmp_buf segv_jmp;

static void on_segv(int sig)
{
	(void)sig;
	siglongjmp(segv_jmp, 1);
}

TEST(context_page_is_read_only)
{
	struct ibv_context *ctx = open_dev();
	struct {
		struct ib_uverbs_get_context core;
		struct softhca_alloc_ucontext_req drv;
	} req = { .drv = { .abi_version = SOFTHCA_UVERBS_ABI_VERSION } };
	volatile uint32_t *page;
	long psz = sysconf(_SC_PAGESIZE);

	REQUIRE(ctx, "open");
	/* Offset 0 is the context page of this context (first entry). */
	page = mmap(NULL, psz, PROT_READ | PROT_WRITE, MAP_SHARED,
		    ctx->cmd_fd, 0);
	CHECK(page == MAP_FAILED && errno == EPERM, "writable map allowed");
	page = mmap(NULL, psz, PROT_READ, MAP_SHARED, ctx->cmd_fd, 0);
	REQUIRE(page != MAP_FAILED, "read-only map");
	CHECK(page[0] == SOFTHCA_CTX_PAGE_MAGIC, "magic %#x", page[0]);
	CHECK(mprotect((void *)page, psz, PROT_READ | PROT_WRITE) == -1,
	      "mprotect to writable allowed");
	signal(SIGSEGV, on_segv);
	if (!sigsetjmp(segv_jmp, 1)) {
		page[0] = 0;
		CHECK(0, "store to read-only page succeeded");
	}
	signal(SIGSEGV, SIG_DFL);
	CHECK(mmap(NULL, 2 * psz, PROT_READ, MAP_SHARED, ctx->cmd_fd, 0) ==
	      MAP_FAILED, "oversized map allowed");
	CHECK(mmap(NULL, psz, PROT_READ, MAP_SHARED, ctx->cmd_fd,
		   64 * psz) == MAP_FAILED, "unknown offset allowed");
	munmap((void *)page, psz);
	(void)req;
	ibv_close_device(ctx);
}

int main(void)
{
	return tap_run();
}
