/* SPDX-License-Identifier: GPL-2.0-only */
/* What /proc/self/smaps says about the mapping holding an address. */
#ifndef SOFTHCA_SMAPS_H
#define SOFTHCA_SMAPS_H

#include <stdio.h>
#include <string.h>

/*
 * Whether the mapping holding @p is marked "do not copy" at fork (VmFlags
 * "dc", set by MADV_DONTFORK): 1 or 0, -1 when it cannot be told.
 */
static inline int vma_dontcopy(const void *p)
{
	char line[512];
	unsigned long lo, hi, a = (unsigned long)p;
	int in = 0, found = -1;
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 &&
		    strchr(line, '-') < strchr(line, ' ')) {
			in = a >= lo && a < hi;
			continue;
		}
		if (in && !strncmp(line, "VmFlags:", 8)) {
			found = strstr(line, " dc") != NULL;
			break;
		}
	}
	fclose(f);
	return found;
}

#endif
