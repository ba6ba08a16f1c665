/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOFTHCA_TOOL_H
#define SOFTHCA_TOOL_H

#include <stdbool.h>

#include "nl.h"

/* Print "softhca: WHAT: strerror: hint" and return the exit status 1. */
int tool_fail(const char *what, const char *op, int err);
/* 0, or -ENODEV when no RDMA device is called @name. */
int tool_find_dev(struct nl *nl, const char *name, struct nl_dev *out);
bool tool_is_softhca(const char *ibdev);
int tool_show(struct nl *nl, const char *name);

#endif
