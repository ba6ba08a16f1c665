#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The data path (datapath.c, TAP): on one device, then across two.
# The poller is bound to CPU 1 as a dedicated poller CPU (it watches a
# QP for a second without work and never yields it for contention), so
# the seccomp test's loop (pinned to CPU 0) never finds its QP handed
# back to the doorbell by a stray task or a TCG clock jump.
# Then random work and fairness (datapath_mix.c, TAP) with the module's
# default poller settings (it yields a contended CPU, so work also runs
# inline in doorbells), again on one device and across two.  make check's
# debug tier runs the two-device rounds only (lib.sh: one_device_round).
. "$(dirname "$0")/lib.sh"

modprobe -r softhca 2>/dev/null
modprobe softhca poller_cpu=1 poll_idle_us=1000000 poll_contended_us=0
softhca_on_veth 2
rc=0
if one_device_round datapath; then
	SOFTHCA_DEV=sh0 "$SELFTESTS/datapath" || rc=1
fi
SOFTHCA_DEV=sh0 SOFTHCA_DEV2=sh1 "$SELFTESTS/datapath" || rc=1
cleanup_all

modprobe softhca
softhca_on_veth 2
if one_device_round datapath_mix; then
	SOFTHCA_DEV=sh0 "$SELFTESTS/datapath_mix" || rc=1
fi
SOFTHCA_DEV=sh0 SOFTHCA_DEV2=sh1 "$SELFTESTS/datapath_mix" || rc=1
cleanup_all
exit $rc
