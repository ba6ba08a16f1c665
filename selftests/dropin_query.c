// SPDX-License-Identifier: GPL-2.0-only
/*
 * A program built against the distribution's libibverbs (-libverbs, its
 * <infiniband/verbs.h>), run by dropin.sh under softhca-run so that every
 * call lands in the drop-in libibverbs.so.1 at the version a distribution
 * program binds: the calls of the extended and private interfaces that
 * the ibv_*_pingpong tools do not reach.  SOFTHCA_DEV names the device.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "smaps.h"
#include "tap.h"
#include "util.h"

/* Exported by libibverbs, declared in headers it no longer installs. */
int ibv_dontfork_range(void *base, size_t size);
const char *ibv_get_sysfs_path(void);
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf,
			size_t size);

static const char *dev(void)
{
	return getenv("SOFTHCA_DEV") ? getenv("SOFTHCA_DEV") : "sh0";
}

TEST(runs_on_the_dropin)
{
	Dl_info info;
	const char *want = getenv("DROPIN_LIB");

	REQUIRE(dladdr((void *)ibv_open_device, &info), "dladdr");
	CHECK(want && !strcmp(info.dli_fname, want), "libibverbs is %s",
	      info.dli_fname);
}

TEST(query_device_ex_ports)
{
	struct ibv_context *ctx = open_by_name(dev());
	struct ibv_device_attr_ex ex;
	struct ibv_device_attr attr;
	int ret;

	REQUIRE(ctx, "open %s", dev());
	memset(&ex, 0xa5, sizeof(ex));
	ret = ibv_query_device_ex(ctx, NULL, &ex);
	CHECK(ret == 0, "ibv_query_device_ex=%d", ret);
	ret = ibv_query_device(ctx, &attr);
	CHECK(ret == 0, "ibv_query_device=%d", ret);
	CHECK(ex.orig_attr.phys_port_cnt == 1, "phys_port_cnt %u",
	      ex.orig_attr.phys_port_cnt);
	CHECK(ex.phys_port_cnt_ex == ex.orig_attr.phys_port_cnt,
	      "phys_port_cnt_ex %u, phys_port_cnt %u", ex.phys_port_cnt_ex,
	      ex.orig_attr.phys_port_cnt);
	CHECK(ex.orig_attr.node_guid == attr.node_guid &&
	      ex.orig_attr.max_qp == attr.max_qp &&
	      ex.orig_attr.max_cqe == attr.max_cqe &&
	      !strcmp(ex.orig_attr.fw_ver, attr.fw_ver),
	      "the extended answer's base differs from ibv_query_device's");
	CHECK(ex.comp_mask == 0, "comp_mask %u", ex.comp_mask);
	printf("NOTE: %s phys_port_cnt %u phys_port_cnt_ex %u device_cap_flags_ex 0x%llx\n",
	       dev(), ex.orig_attr.phys_port_cnt, ex.phys_port_cnt_ex,
	       (unsigned long long)ex.device_cap_flags_ex);
	ibv_close_device(ctx);
}

/* Each GID entry's type, from ibv_query_gid_ex and from sysfs. */
TEST(gid_types_match_sysfs)
{
	struct ibv_context *ctx = open_by_name(dev());
	int (*gid_type)(struct ibv_context *, uint8_t, unsigned int, int *);
	struct ibv_port_attr pattr;
	int i, v1 = 0, v2 = 0;

	REQUIRE(ctx, "open %s", dev());
	REQUIRE(!ibv_query_port(ctx, 1, &pattr), "query_port");
	gid_type = (int (*)(struct ibv_context *, uint8_t, unsigned int, int *))
		dlsym(RTLD_DEFAULT, "ibv_query_gid_type");
	CHECK(gid_type, "ibv_query_gid_type not exported");
	for (i = 0; i < pattr.gid_tbl_len; i++) {
		struct ibv_gid_entry e;
		char path[256], buf[32];
		FILE *f;
		int t = -1, ret;

		ret = ibv_query_gid_ex(ctx, 1, (uint32_t)i, &e, 0);
		if (ret == ENODATA)
			continue;
		CHECK(ret == 0, "ibv_query_gid_ex(%d)=%d", i, ret);
		snprintf(path, sizeof(path),
			 "/sys/class/infiniband/%s/ports/1/gid_attrs/types/%d",
			 dev(), i);
		f = fopen(path, "r");
		REQUIRE(f && fgets(buf, sizeof(buf), f), "read %s", path);
		fclose(f);
		if (!strcmp(buf, "RoCE v2\n")) {
			CHECK(e.gid_type == IBV_GID_TYPE_ROCE_V2, "GID %d: %d", i,
			      e.gid_type);
			v2++;
		} else {
			CHECK(e.gid_type == IBV_GID_TYPE_ROCE_V1, "GID %d: %d (%s)",
			      i, e.gid_type, buf);
			v1++;
		}
		if (gid_type) {
			/* 0: IB/RoCE v1, 1: RoCE v2 (libibverbs' numbering) */
			CHECK(gid_type(ctx, 1, (unsigned int)i, &t) == 0 &&
			      t == (e.gid_type == IBV_GID_TYPE_ROCE_V2),
			      "ibv_query_gid_type(%d) = %d", i, t);
		}
	}
	CHECK(v1 + v2 > 0, "no GID entries");
	printf("NOTE: %s GID entries: %d RoCE v1, %d RoCE v2\n", dev(), v1, v2);
	ibv_close_device(ctx);
}

TEST(read_sysfs_file)
{
	char file[128], buf[64];
	int n;

	snprintf(file, sizeof(file), "class/infiniband/%s/node_type", dev());
	n = ibv_read_sysfs_file(ibv_get_sysfs_path(), file, buf, sizeof(buf));
	CHECK(n > 0 && !strncmp(buf, "1: CA", 5), "%d '%s'", n, n > 0 ? buf : "");
}

/*
 * The guest's kernel copies pinned pages at fork: fork support is not
 * needed, and without RDMAV_USE_MADVISE an MR leaves its pages alone.
 * With it (dropin.sh runs this test point both ways) ibv_fork_init turns
 * tracking on and an MR's pages are kept from children while it lives.
 */
TEST(fork_and_mr_ranges)
{
	struct ibv_context *ctx = open_by_name(dev());
	long ps = sysconf(_SC_PAGESIZE);
	int madv = getenv("RDMAV_USE_MADVISE") != NULL;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	char *buf;

	REQUIRE(ctx, "open %s", dev());
	CHECK(ibv_is_fork_initialized() == IBV_FORK_UNNEEDED,
	      "the kernel copies on fork, yet: %d", ibv_is_fork_initialized());
	CHECK(ibv_fork_init() == 0, "ibv_fork_init");
	pd = ibv_alloc_pd(ctx);
	REQUIRE(pd, "alloc_pd");
	buf = mmap(NULL, 3 * ps, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	REQUIRE(buf != MAP_FAILED, "mmap");
	mr = ibv_reg_mr(pd, buf + ps, (size_t)ps, IBV_ACCESS_LOCAL_WRITE);
	REQUIRE(mr, "reg_mr");
	CHECK(vma_dontcopy(buf + ps) == madv && vma_dontcopy(buf) == 0 &&
	      vma_dontcopy(buf + 2 * ps) == 0, "MR page marked %d (want %d), neighbours %d %d",
	      vma_dontcopy(buf + ps), madv, vma_dontcopy(buf), vma_dontcopy(buf + 2 * ps));
	CHECK(ibv_dereg_mr(mr) == 0, "dereg_mr");
	CHECK(vma_dontcopy(buf + ps) == 0, "MR page still marked after dereg");
	munmap(buf, 3 * ps);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	printf("NOTE: fork status %d with RDMAV_USE_MADVISE %s\n",
	       ibv_is_fork_initialized(), madv ? "set" : "unset");
}

int main(void)
{
	return tap_run();
}
