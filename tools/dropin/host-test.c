// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host-side checks of the libibverbs calls that need no RDMA device:
 * sysfs helpers, the uverbs/SA struct copies, fork support with real
 * MADV_DONTFORK ranges, and (in the drop-in build) the compatibility and
 * provider-interface symbols.  Built by tools/dropin/check twice: against
 * the distribution's libibverbs (-DDROPIN, then run under softhca-run, so
 * every call binds to the drop-in at the version a distribution program
 * binds to) and against libsofthca.a.
 *
 * usage: host-test [too-late]
 * Prints "ok - NAME" / "not ok - NAME" lines; exits 1 on any failure.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <infiniband/verbs.h>
#include <infiniband/sa.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/ib_user_sa.h>

#include "smaps.h"

/* Exported by libibverbs, declared in headers it no longer installs. */
int ibv_dontfork_range(void *base, size_t size);
int ibv_dofork_range(void *base, size_t size);
const char *ibv_get_sysfs_path(void);
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf,
			size_t size);
void ibv_copy_ah_attr_from_kern(struct ibv_ah_attr *dst,
				struct ib_uverbs_ah_attr *src);
void ibv_copy_qp_attr_from_kern(struct ibv_qp_attr *dst,
				struct ib_uverbs_qp_attr *src);
void ibv_copy_path_rec_from_kern(struct ibv_sa_path_rec *dst,
				 struct ib_user_path_rec *src);
void ibv_copy_path_rec_to_kern(struct ib_user_path_rec *dst,
			       struct ibv_sa_path_rec *src);

static int failed;

#define CHECK(cond, ...)						\
	do {								\
		if (cond) {						\
			printf("ok - ");				\
		} else {						\
			printf("not ok - ");				\
			failed = 1;					\
		}							\
		printf(__VA_ARGS__);					\
		printf("\n");						\
	} while (0)

static void test_sysfs(void)
{
	char dir[] = "/tmp/host-test.XXXXXX", path[64], buf[8];
	const char *env = getenv("SYSFS_PATH");
	int fd, n;

	if (env)
		CHECK(!strcmp(ibv_get_sysfs_path(), "/tmp/sysfs"),
		      "ibv_get_sysfs_path follows SYSFS_PATH without its slashes: %s",
		      ibv_get_sysfs_path());
	else
		CHECK(!strcmp(ibv_get_sysfs_path(), "/sys"),
		      "ibv_get_sysfs_path is /sys: %s", ibv_get_sysfs_path());

	if (!mkdtemp(dir)) {
		CHECK(0, "mkdtemp: %s", strerror(errno));
		return;
	}
	snprintf(path, sizeof(path), "%s/abi_version", dir);
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	if (fd < 0 || write(fd, "7\n", 2) != 2) {
		CHECK(0, "write %s", path);
		return;
	}
	close(fd);
	n = ibv_read_sysfs_file(dir, "abi_version", buf, sizeof(buf));
	CHECK(n == 1 && !strcmp(buf, "7"),
	      "ibv_read_sysfs_file reads the value without its newline (%d '%s')",
	      n, n >= 0 ? buf : "");
	n = ibv_read_sysfs_file(dir, "abi_version", buf, 2);
	CHECK(n == 1 && buf[0] == '7',
	      "a value that fills the buffer and ends in a newline fits (%d)", n);
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0 || write(fd, "12345678", 8) != 8) {
		CHECK(0, "rewrite %s", path);
		return;
	}
	close(fd);
	n = ibv_read_sysfs_file(dir, "abi_version", buf, sizeof(buf));
	CHECK(n == -1, "a value with no room for its NUL fails (%d)", n);
	errno = 0;
	n = ibv_read_sysfs_file(dir, "missing", buf, sizeof(buf));
	CHECK(n == -1 && errno == ENOENT, "a missing file: -1, ENOENT (%d, %s)",
	      n, strerror(errno));
	unlink(path);
	rmdir(dir);
}

static void test_marshall(void)
{
	struct ib_uverbs_qp_attr k;
	struct ibv_qp_attr v;
	struct ib_user_path_rec kp, kp2;
	struct ibv_sa_path_rec vp;
	int i;

	memset(&k, 0, sizeof(k));
	memset(&v, 0xee, sizeof(v));
	v.qp_state = IBV_QPS_RTR;
	k.qp_state = IBV_QPS_ERR;
	k.cur_qp_state = IBV_QPS_INIT;
	k.path_mtu = IBV_MTU_1024;
	k.path_mig_state = IBV_MIG_REARM;
	k.qkey = 0x11111111;
	k.rq_psn = 0x222222;
	k.sq_psn = 0x333333;
	k.dest_qp_num = 0x444444;
	k.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	k.max_send_wr = 5;
	k.max_recv_wr = 6;
	k.max_send_sge = 7;
	k.max_recv_sge = 8;
	k.max_inline_data = 9;
	for (i = 0; i < 16; i++) {
		k.ah_attr.grh.dgid[i] = (uint8_t)i;
		k.alt_ah_attr.grh.dgid[i] = (uint8_t)(0xf0 | i);
	}
	k.ah_attr.grh.flow_label = 0x12345;
	k.ah_attr.grh.sgid_index = 3;
	k.ah_attr.grh.hop_limit = 64;
	k.ah_attr.grh.traffic_class = 0x20;
	k.ah_attr.dlid = 0x77;
	k.ah_attr.sl = 2;
	k.ah_attr.src_path_bits = 1;
	k.ah_attr.static_rate = 3;
	k.ah_attr.is_global = 1;
	k.ah_attr.port_num = 1;
	k.alt_ah_attr.dlid = 0x88;
	k.alt_ah_attr.port_num = 2;
	k.pkey_index = 10;
	k.alt_pkey_index = 11;
	k.en_sqd_async_notify = 1;
	k.sq_draining = 1;
	k.max_rd_atomic = 12;
	k.max_dest_rd_atomic = 13;
	k.min_rnr_timer = 14;
	k.port_num = 1;
	k.timeout = 15;
	k.retry_cnt = 6;
	k.rnr_retry = 7;
	k.alt_port_num = 2;
	k.alt_timeout = 16;
	ibv_copy_qp_attr_from_kern(&v, &k);
	CHECK(v.qp_state == IBV_QPS_RTR && v.cur_qp_state == IBV_QPS_INIT &&
	      v.path_mtu == IBV_MTU_1024 && v.path_mig_state == IBV_MIG_REARM &&
	      v.qkey == 0x11111111 && v.rq_psn == 0x222222 &&
	      v.sq_psn == 0x333333 && v.dest_qp_num == 0x444444 &&
	      v.qp_access_flags == IBV_ACCESS_REMOTE_WRITE &&
	      v.cap.max_send_wr == 5 && v.cap.max_recv_wr == 6 &&
	      v.cap.max_send_sge == 7 && v.cap.max_recv_sge == 8 &&
	      v.cap.max_inline_data == 9 && v.pkey_index == 10 &&
	      v.alt_pkey_index == 11 && v.en_sqd_async_notify == 1 &&
	      v.sq_draining == 1 && v.max_rd_atomic == 12 &&
	      v.max_dest_rd_atomic == 13 && v.min_rnr_timer == 14 &&
	      v.port_num == 1 && v.timeout == 15 && v.retry_cnt == 6 &&
	      v.rnr_retry == 7 && v.alt_port_num == 2 && v.alt_timeout == 16,
	      "ibv_copy_qp_attr_from_kern copies every field but qp_state");
	CHECK(v.ah_attr.grh.dgid.raw[15] == 15 &&
	      v.ah_attr.grh.flow_label == 0x12345 &&
	      v.ah_attr.grh.sgid_index == 3 && v.ah_attr.grh.hop_limit == 64 &&
	      v.ah_attr.grh.traffic_class == 0x20 && v.ah_attr.dlid == 0x77 &&
	      v.ah_attr.sl == 2 && v.ah_attr.src_path_bits == 1 &&
	      v.ah_attr.static_rate == 3 && v.ah_attr.is_global == 1 &&
	      v.ah_attr.port_num == 1 &&
	      v.alt_ah_attr.grh.dgid.raw[0] == 0xf0 &&
	      v.alt_ah_attr.dlid == 0x88 && v.alt_ah_attr.port_num == 2,
	      "ibv_copy_ah_attr_from_kern: primary and alternate paths");

	memset(&kp, 0, sizeof(kp));
	for (i = 0; i < 16; i++) {
		kp.dgid[i] = (uint8_t)(i + 1);
		kp.sgid[i] = (uint8_t)(i + 100);
	}
	kp.dlid = htobe16(5);
	kp.slid = htobe16(6);
	kp.raw_traffic = 1;
	kp.flow_label = htobe32(0xabcde);
	kp.hop_limit = 255;
	kp.traffic_class = 9;
	kp.reversible = 1;
	kp.numb_path = 1;
	kp.pkey = htobe16(0xffff);
	kp.sl = 3;
	kp.mtu_selector = 2;
	kp.mtu = IBV_MTU_4096;
	kp.rate_selector = 2;
	kp.rate = 7;
	kp.packet_life_time_selector = 2;
	kp.packet_life_time = 18;
	kp.preference = 4;
	memset(&vp, 0, sizeof(vp));
	ibv_copy_path_rec_from_kern(&vp, &kp);
	CHECK(vp.dgid.raw[0] == 1 && vp.sgid.raw[15] == 115 &&
	      vp.dlid == htobe16(5) && vp.slid == htobe16(6) &&
	      vp.raw_traffic == 1 && vp.flow_label == htobe32(0xabcde) &&
	      vp.hop_limit == 255 && vp.traffic_class == 9 &&
	      vp.reversible == 1 && vp.numb_path == 1 &&
	      vp.pkey == htobe16(0xffff) && vp.sl == 3 &&
	      vp.mtu_selector == 2 && vp.mtu == IBV_MTU_4096 &&
	      vp.rate_selector == 2 && vp.rate == 7 &&
	      vp.packet_life_time_selector == 2 &&
	      vp.packet_life_time == 18 && vp.preference == 4,
	      "ibv_copy_path_rec_from_kern copies every field, byte order kept");
	memset(&kp2, 0x5a, sizeof(kp2));
	ibv_copy_path_rec_to_kern(&kp2, &vp);
	CHECK(!memcmp(&kp, &kp2, offsetof(struct ib_user_path_rec, preference) + 1),
	      "ibv_copy_path_rec_to_kern gives the kernel record back");
}

/* What a child sees at @p: 0 read fine, 1 killed by SIGSEGV. */
static int child_faults(volatile const char *p)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		(void)*p;
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV)
		return 1;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static void test_fork(void)
{
	long ps = sysconf(_SC_PAGESIZE);
	char *buf;
	int ret;

	CHECK(ibv_is_fork_initialized() != IBV_FORK_ENABLED,
	      "fork support off before ibv_fork_init (%d)",
	      ibv_is_fork_initialized());
	ret = ibv_fork_init();
	CHECK(ret == 0, "ibv_fork_init with RDMAV_USE_MADVISE=1: %d", ret);
	/* A kernel that copies on fork answers UNNEEDED before anything. */
	CHECK(ibv_is_fork_initialized() != IBV_FORK_DISABLED,
	      "ibv_is_fork_initialized after init: %d",
	      ibv_is_fork_initialized());

	buf = mmap(NULL, 4 * ps, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED) {
		CHECK(0, "mmap");
		return;
	}
	memset(buf, 1, 4 * ps);
	/* Bytes in the middle of page 1 .. page 2 mark both whole pages. */
	ret = ibv_dontfork_range(buf + ps + 100, (size_t)ps);
	CHECK(ret == 0 && vma_dontcopy(buf + ps) == 1 && vma_dontcopy(buf + 2 * ps) == 1 &&
	      vma_dontcopy(buf) == 0 && vma_dontcopy(buf + 3 * ps) == 0,
	      "ibv_dontfork_range marks the pages the range touches, page aligned (%d: %d%d%d%d)",
	      ret, vma_dontcopy(buf), vma_dontcopy(buf + ps), vma_dontcopy(buf + 2 * ps),
	      vma_dontcopy(buf + 3 * ps));
	CHECK(child_faults(buf + ps) == 1 && child_faults(buf) == 0,
	      "a child has no mapping at the marked pages and keeps the others");
	/* A second range over page 2 .. 3: page 2 now counted twice. */
	ret = ibv_dontfork_range(buf + 2 * ps, 2 * (size_t)ps);
	CHECK(ret == 0 && vma_dontcopy(buf + 3 * ps) == 1,
	      "an overlapping range marks its new page (%d)", ret);
	ret = ibv_dofork_range(buf + ps + 100, (size_t)ps);
	CHECK(ret == 0 && vma_dontcopy(buf + ps) == 0 && vma_dontcopy(buf + 2 * ps) == 1 &&
	      vma_dontcopy(buf + 3 * ps) == 1,
	      "ibv_dofork_range releases only the pages no other range holds (%d: %d%d%d)",
	      ret, vma_dontcopy(buf + ps), vma_dontcopy(buf + 2 * ps), vma_dontcopy(buf + 3 * ps));
	ret = ibv_dofork_range(buf + 2 * ps, 2 * (size_t)ps);
	CHECK(ret == 0 && vma_dontcopy(buf + 2 * ps) == 0 && vma_dontcopy(buf + 3 * ps) == 0 &&
	      child_faults(buf + 2 * ps) == 0,
	      "the last release gives the pages back to a child (%d)", ret);
	ret = ibv_dofork_range(buf, (size_t)ps);
	CHECK(ret == 0 && vma_dontcopy(buf) == 0,
	      "releasing a range never marked does nothing (%d)", ret);
	munmap(buf, 4 * ps);
	/* Unmapped memory cannot be marked; the table stays as it was. */
	ret = ibv_dontfork_range(buf, (size_t)ps);
	CHECK(ret != 0, "marking unmapped memory fails (%d)", ret);
	ret = ibv_dofork_range(buf, (size_t)ps);
	CHECK(ret == 0, "and nothing is left to release (%d)", ret);
}

/* ibv_fork_init after a range was passed: EINVAL (unless not needed). */
static void test_too_late(void)
{
	char page[64];
	int ret;

	ibv_dontfork_range(page, sizeof(page));
	ret = ibv_fork_init();
	if (ibv_is_fork_initialized() == IBV_FORK_UNNEEDED && !getenv("RDMAV_USE_MADVISE"))
		CHECK(ret == 0, "ibv_fork_init on a copy-on-fork kernel: 0 (%d)", ret);
	else
		CHECK(ret == EINVAL, "ibv_fork_init after ibv_dontfork_range: EINVAL (%d)", ret);
}

#ifdef DROPIN
static void test_dropin(const char *pabi)
{
	void *(*list10)(int *);
	void *(*alloc10)(void *);
	int (*cmd)(void *);
	void (*reg)(const void *);
	Dl_info info;
	char name[64];
	const char *want = getenv("DROPIN_LIB");
	int n = -1;

	if (dladdr((void *)ibv_get_device_list, &info) && want)
		CHECK(!strcmp(info.dli_fname, want),
		      "libibverbs.so.1 is the drop-in: %s", info.dli_fname);
	list10 = (void *(*)(int *))dlvsym(RTLD_DEFAULT, "ibv_get_device_list",
					  "IBVERBS_1.0");
	CHECK(list10 && (void *)list10 != (void *)ibv_get_device_list,
	      "ibv_get_device_list@IBVERBS_1.0 is its own function");
	if (list10) {
		errno = 0;
		CHECK(!list10(&n) && errno == EOPNOTSUPP,
		      "the 1.0 device list: NULL, EOPNOTSUPP (%s)", strerror(errno));
	}
	CHECK(dlvsym(RTLD_DEFAULT, "ibv_get_device_list", "IBVERBS_1.1") ==
	      (void *)ibv_get_device_list,
	      "a program binds ibv_get_device_list@@IBVERBS_1.1");
	alloc10 = (void *(*)(void *))dlvsym(RTLD_DEFAULT, "ibv_alloc_pd",
					    "IBVERBS_1.0");
	if (alloc10) {
		errno = 0;
		CHECK(!alloc10(NULL) && errno == EOPNOTSUPP,
		      "ibv_alloc_pd@IBVERBS_1.0: NULL, EOPNOTSUPP");
	} else {
		CHECK(0, "ibv_alloc_pd@IBVERBS_1.0 exists");
	}
	snprintf(name, sizeof(name), "IBVERBS_PRIVATE_%s", pabi);
	cmd = (int (*)(void *))dlvsym(RTLD_DEFAULT, "ibv_cmd_dealloc_pd", name);
	CHECK(cmd && cmd(NULL) == EOPNOTSUPP,
	      "ibv_cmd_dealloc_pd@%s answers EOPNOTSUPP", name);
	snprintf(name, sizeof(name), "verbs_register_driver_%s", pabi);
	reg = (void (*)(const void *))dlsym(RTLD_DEFAULT, name);
	if (reg)
		reg(NULL);
	CHECK(reg != NULL, "%s accepts a registration", name);
	reg = (void (*)(const void *))dlvsym(RTLD_DEFAULT, "ibv_register_driver",
					     "IBVERBS_1.1");
	if (reg)
		reg(NULL);
	CHECK(reg != NULL, "ibv_register_driver@IBVERBS_1.1 accepts one too");
}
#endif

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "too-late")) {
		test_too_late();
		return failed;
	}
	test_sysfs();
	test_marshall();
	test_fork();
#ifdef DROPIN
	test_dropin(argc > 1 ? argv[1] : "34");
#endif
	return failed;
}
