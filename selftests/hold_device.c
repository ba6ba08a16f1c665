// SPDX-License-Identifier: GPL-2.0-only
/*
 * hold_device DEV READY_FILE: open DEV through libsofthca, allocate a PD,
 * map nothing extra, create READY_FILE, then wait for SIGUSR1.  On the
 * signal, check that the device is gone for us (commands fail, nothing
 * crashes, the context page stays readable) and exit 0; any other
 * outcome exits 1.  Used to prove that removing a device does not wait
 * for, or break, a process that still has it open.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include "util.h"

static volatile sig_atomic_t go;

static void on_usr1(int sig)
{
	(void)sig;
	go = 1;
}

int main(int argc, char **argv)
{
	struct ibv_device_attr attr;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	int ret, fd;

	if (argc != 3)
		return 2;
	signal(SIGUSR1, on_usr1);
	ctx = open_by_name(argv[1]);
	if (!ctx) {
		perror("open");
		return 1;
	}
	pd = ibv_alloc_pd(ctx);
	if (!pd) {
		perror("pd");
		return 1;
	}
	fd = open(argv[2], O_CREAT | O_WRONLY, 0644);
	close(fd);
	while (!go)
		pause();

	ret = ibv_query_device(ctx, &attr);
	if (ret == 0) {
		fprintf(stderr, "query_device still works on a removed device\n");
		return 1;
	}
	printf("query_device after removal: %s\n", strerror(ret));
	if (ibv_alloc_pd(ctx)) {
		fprintf(stderr, "alloc_pd works on a removed device\n");
		return 1;
	}
	/* The PD died with the device: dealloc succeeds and frees it. */
	ret = ibv_dealloc_pd(pd);
	if (ret) {
		fprintf(stderr, "dealloc_pd after removal: %s\n", strerror(ret));
		return 1;
	}
	ibv_close_device(ctx);
	return 0;
}
