// SPDX-License-Identifier: GPL-2.0-only OR MIT
/* libsofthca: small sysfs readers, and the two libibverbs exports for them. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

/* Read a sysfs attribute into @buf without its trailing newline. */
int shca_sysfs_read(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return (int)n;
}

int shca_sysfs_read_int(const char *path, long *val)
{
	char buf[64], *end;
	int ret;

	ret = shca_sysfs_read(path, buf, sizeof(buf));
	if (ret < 0)
		return ret;
	errno = 0;
	*val = strtol(buf, &end, 0);
	if (errno || end == buf)
		return -EINVAL;
	return 0;
}

/*
 * ibv_get_sysfs_path: where sysfs is mounted, "/sys" unless the SYSFS_PATH
 * environment variable says otherwise (trailing slashes dropped).  The
 * environment is not trusted in a set-user-ID or set-group-ID program.
 */
static char sysfs_path[IBV_SYSFS_PATH_MAX];
static pthread_once_t sysfs_path_once = PTHREAD_ONCE_INIT;

static void sysfs_path_init(void)
{
	const char *env = secure_getenv("SYSFS_PATH");
	size_t len;

	if (!env || !*env)
		env = "/sys";
	snprintf(sysfs_path, sizeof(sysfs_path), "%s", env);
	len = strlen(sysfs_path);
	while (len > 1 && sysfs_path[len - 1] == '/')
		sysfs_path[--len] = '\0';
}

SHCA_EXPORT const char *ibv_get_sysfs_path(void)
{
	pthread_once(&sysfs_path_once, sysfs_path_init);
	return sysfs_path;
}

/*
 * ibv_read_sysfs_file: read @dir/@file into @buf as a string without its
 * trailing newline.  Returns the length read, or -1 with errno set, also
 * when the contents do not fit with their terminating NUL.
 */
SHCA_EXPORT int ibv_read_sysfs_file(const char *dir, const char *file,
				    char *buf, size_t size)
{
	char path[IBV_SYSFS_PATH_MAX * 2];
	ssize_t n;
	int fd;

	if (!size) {
		errno = EINVAL;
		return -1;
	}
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, file) >=
	    sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, size);
	close(fd);
	if (n < 0)
		return -1;
	if (n > 0 && buf[n - 1] == '\n') {
		buf[--n] = '\0';
	} else if ((size_t)n < size) {
		buf[n] = '\0';
	} else {
		errno = EOVERFLOW;
		return -1;
	}
	return (int)n;
}
