// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * libsofthca: fork() support, ibv_fork_init(3).
 *
 * Memory given to an RDMA device must stay at the same physical pages
 * while the device may touch it.  A kernel that copies pinned pages at
 * fork() (the RDMA netlink "copy-on-fork" system attribute, Linux 5.13
 * and later) already guarantees that, and ibv_is_fork_initialized()
 * answers IBV_FORK_UNNEEDED.  Otherwise, or when RDMAV_USE_MADVISE is set,
 * ibv_fork_init() turns on range tracking: every registered range is
 * marked MADV_DONTFORK, so a child gets no mapping there at all rather
 * than a copy-on-write one that would move the parent's pages.
 *
 * Ranges are counted per page: two MRs over one page mark it once, and it
 * becomes MADV_DOFORK again only when the last of them is gone.  The
 * table is a sorted array of disjoint page-aligned [start, end) runs with
 * their counts (pages not in it count zero); each call builds the new
 * table beside the old one, changes the advice of exactly the pages whose
 * count went 0 -> 1 (DONTFORK) or 1 -> 0 (DOFORK), and installs it only
 * when that worked, so a failed call leaves both the table and the
 * mappings as they were.
 *
 * With RDMAV_HUGEPAGES_SAFE set, a range is aligned to the page size of
 * the mapping it lies in (from /proc/self/smaps), as madvise() on part of
 * a huge page would fail.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>

#include "internal.h"

struct fork_run {
	uintptr_t start, end;		/* page aligned, end exclusive */
	unsigned int refs;		/* > 0 */
};

static pthread_mutex_t fork_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fork_run *fork_runs;
static size_t fork_nruns;
static int fork_enabled;		/* ibv_fork_init() turned tracking on */
static int fork_too_late;		/* a range was passed before that */
static int fork_huge_safe;		/* RDMAV_HUGEPAGES_SAFE */
static size_t fork_page_size;

/* Whether an environment variable is set to something other than "0"/"". */
static int env_true(const char *name)
{
	const char *v = getenv(name);

	return v && *v && strcmp(v, "0") != 0;
}

/*
 * Ask the kernel (RDMA netlink, RDMA_NLDEV_CMD_SYS_GET) whether it copies
 * pinned pages at fork().  Any failure answers "no".
 */
static int query_copy_on_fork(void)
{
	struct {
		struct nlmsghdr nlh;
	} req = {
		.nlh = {
			.nlmsg_len = sizeof(struct nlmsghdr),
			.nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV,
						       RDMA_NLDEV_CMD_SYS_GET),
			.nlmsg_flags = NLM_F_REQUEST,
			.nlmsg_seq = 1,
		},
	};
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	uint32_t buf[1024];
	struct nlmsghdr *nlh = (struct nlmsghdr *)buf;
	struct nlattr *a;
	int fd, answer = 0;
	ssize_t n;
	size_t off;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_RDMA);
	if (fd < 0)
		return 0;
	if (sendto(fd, &req, req.nlh.nlmsg_len, 0, (struct sockaddr *)&sa,
		   sizeof(sa)) < 0)
		goto out;
	n = recv(fd, buf, sizeof(buf), 0);
	if (n < (ssize_t)NLMSG_HDRLEN || !NLMSG_OK(nlh, (size_t)n) ||
	    nlh->nlmsg_type == NLMSG_ERROR)
		goto out;
	for (off = NLMSG_HDRLEN; off + NLA_HDRLEN <= nlh->nlmsg_len;
	     off += NLA_ALIGN(a->nla_len)) {
		a = (struct nlattr *)((char *)nlh + off);
		if (a->nla_len < NLA_HDRLEN ||
		    off + a->nla_len > nlh->nlmsg_len)
			break;
		if ((a->nla_type & NLA_TYPE_MASK) ==
		    RDMA_NLDEV_SYS_ATTR_COPY_ON_FORK &&
		    a->nla_len >= NLA_HDRLEN + 1)
			answer = *((uint8_t *)a + NLA_HDRLEN) != 0;
	}
out:
	close(fd);
	return answer;
}

static pthread_once_t cof_once = PTHREAD_ONCE_INIT;
static int copy_on_fork;

static void cof_init(void)
{
	copy_on_fork = query_copy_on_fork();
}

static int kernel_copies_on_fork(void)
{
	pthread_once(&cof_once, cof_init);
	return copy_on_fork;
}

SHCA_EXPORT enum ibv_fork_status ibv_is_fork_initialized(void)
{
	if (kernel_copies_on_fork())
		return IBV_FORK_UNNEEDED;
	return __atomic_load_n(&fork_enabled, __ATOMIC_ACQUIRE) ?
		IBV_FORK_ENABLED : IBV_FORK_DISABLED;
}

SHCA_EXPORT int ibv_fork_init(void)
{
	long ps;
	void *probe;
	int ret = 0;

	pthread_mutex_lock(&fork_lock);
	if (env_true("RDMAV_HUGEPAGES_SAFE"))
		fork_huge_safe = 1;
	if (fork_enabled)
		goto out;
	if (!env_true("RDMAV_USE_MADVISE") && kernel_copies_on_fork())
		goto out;
	/* Ranges already registered were never marked: too late. */
	if (fork_too_late) {
		ret = EINVAL;
		goto out;
	}
	ps = sysconf(_SC_PAGESIZE);
	if (ps <= 0) {
		ret = EINVAL;
		goto out;
	}
	fork_page_size = (size_t)ps;
	/* The kernel must know MADV_DONTFORK (Linux 2.6.16). */
	probe = mmap(NULL, fork_page_size, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (probe == MAP_FAILED) {
		ret = ENOMEM;
		goto out;
	}
	if (madvise(probe, fork_page_size, MADV_DONTFORK) ||
	    madvise(probe, fork_page_size, MADV_DOFORK))
		ret = ENOSYS;
	munmap(probe, fork_page_size);
	if (!ret)
		__atomic_store_n(&fork_enabled, 1, __ATOMIC_RELEASE);
out:
	pthread_mutex_unlock(&fork_lock);
	return ret;
}

/* The page size of the mapping holding @addr (KernelPageSize in smaps). */
static size_t mapping_page_size(uintptr_t addr)
{
	size_t size = fork_page_size;
	uintptr_t lo, hi;
	int in = 0;
	char line[256];
	FILE *f;

	f = fopen("/proc/self/smaps", "re");
	if (!f)
		return size;
	while (fgets(line, sizeof(line), f)) {
		unsigned long kb;

		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " ", &lo, &hi) == 2 &&
		    strchr(line, '-') < strchr(line, ' ')) {
			in = addr >= lo && addr < hi;
			continue;
		}
		if (in && sscanf(line, "KernelPageSize: %lu kB", &kb) == 1) {
			if (kb)
				size = (size_t)kb * 1024;
			break;
		}
	}
	fclose(f);
	return size;
}

/* Append run [start, end) with @refs to @v, merging with its left side. */
static void put_run(struct fork_run *v, size_t *n, uintptr_t start,
		    uintptr_t end, unsigned int refs)
{
	if (start >= end || !refs)
		return;
	if (*n && v[*n - 1].end == start && v[*n - 1].refs == refs) {
		v[*n - 1].end = end;
		return;
	}
	v[(*n)++] = (struct fork_run){ start, end, refs };
}

/* Change the advice of @t[0..n); on failure undo and return the errno. */
static int advise_runs(const struct fork_run *t, size_t n, int advice)
{
	size_t i, j;
	uintptr_t p;

	for (i = 0; i < n; i++) {
		if (!madvise((void *)t[i].start, t[i].end - t[i].start, advice))
			continue;
		if (advice == MADV_DOFORK) {
			/*
			 * Giving pages back never fails the caller: the
			 * memory may be unmapped already.  Do what can be
			 * done page by page.
			 */
			for (p = t[i].start; p < t[i].end; p += fork_page_size)
				madvise((void *)p, fork_page_size, MADV_DOFORK);
			continue;
		}
		{
			int err = errno;

			for (j = 0; j < i; j++)
				madvise((void *)t[j].start,
					t[j].end - t[j].start, MADV_DOFORK);
			return err;
		}
	}
	return 0;
}

/* Count [start, end) up (inc 1) or down (inc -1); fork_lock held. */
static int track_range(uintptr_t start, uintptr_t end, int inc)
{
	struct fork_run *next, *flip;
	size_t n = 0, nflip = 0, i, room = 2 * fork_nruns + 4;
	uintptr_t pos = start;
	int err;

	next = malloc(room * sizeof(*next));
	flip = malloc(room * sizeof(*flip));
	if (!next || !flip) {
		free(next);
		free(flip);
		return ENOMEM;
	}
	for (i = 0; i < fork_nruns; i++) {
		const struct fork_run *r = &fork_runs[i];
		uintptr_t lo, hi;

		if (r->end <= start || r->start >= end) {
			/* The gap before a run past the range. */
			if (r->start >= end && pos < end) {
				if (inc > 0) {
					put_run(next, &n, pos, end, 1);
					put_run(flip, &nflip, pos, end, 1);
				}
				pos = end;
			}
			put_run(next, &n, r->start, r->end, r->refs);
			continue;
		}
		lo = r->start > start ? r->start : start;
		hi = r->end < end ? r->end : end;
		/* The gap inside the range before this run. */
		if (pos < lo && inc > 0) {
			put_run(next, &n, pos, lo, 1);
			put_run(flip, &nflip, pos, lo, 1);
		}
		put_run(next, &n, r->start, lo, r->refs);
		if (inc > 0) {
			put_run(next, &n, lo, hi, r->refs + 1);
		} else {
			put_run(next, &n, lo, hi, r->refs - 1);
			if (r->refs == 1)
				put_run(flip, &nflip, lo, hi, 1);
		}
		put_run(next, &n, hi, r->end, r->refs);
		pos = hi;
	}
	if (pos < end && inc > 0) {
		put_run(next, &n, pos, end, 1);
		put_run(flip, &nflip, pos, end, 1);
	}

	err = advise_runs(flip, nflip, inc > 0 ? MADV_DONTFORK : MADV_DOFORK);
	free(flip);
	if (err) {
		free(next);
		return err;
	}
	free(fork_runs);
	fork_runs = next;
	fork_nruns = n;
	return 0;
}

static int fork_range(void *base, size_t size, int inc)
{
	uintptr_t start, end;
	size_t ps;
	int err = 0;

	if (!__atomic_load_n(&fork_enabled, __ATOMIC_ACQUIRE)) {
		pthread_mutex_lock(&fork_lock);
		if (!fork_enabled) {
			fork_too_late = 1;
			pthread_mutex_unlock(&fork_lock);
			return 0;
		}
		pthread_mutex_unlock(&fork_lock);
	}
	if (!base || !size)
		return 0;

	ps = fork_huge_safe ? mapping_page_size((uintptr_t)base) :
			      fork_page_size;
	start = (uintptr_t)base & ~(uintptr_t)(ps - 1);
	if ((uintptr_t)base + size < (uintptr_t)base ||
	    (uintptr_t)base + size > UINTPTR_MAX - ps)
		return EINVAL;
	end = ((uintptr_t)base + size + ps - 1) & ~(uintptr_t)(ps - 1);

	pthread_mutex_lock(&fork_lock);
	err = track_range(start, end, inc);
	pthread_mutex_unlock(&fork_lock);
	if (err)
		errno = err;
	return err;
}

/*
 * ibv_dontfork_range(3)/ibv_dofork_range(3): 0, or the errno value (also
 * left in errno).  Before ibv_fork_init() enabled tracking they do
 * nothing, and ibv_fork_init() then refuses (EINVAL).
 */
SHCA_EXPORT int ibv_dontfork_range(void *base, size_t size)
{
	return fork_range(base, size, 1);
}

SHCA_EXPORT int ibv_dofork_range(void *base, size_t size)
{
	return fork_range(base, size, -1);
}
