#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The data path (datapath.c, TAP): on one device, then across two.
# The poller is bound to CPU 1 as a dedicated poller CPU (it watches a
# QP for a second without work and never yields it for contention), so
# the seccomp test's loop (pinned to CPU 0) never finds its QP handed
# back to the doorbell by a stray task or a TCG clock jump.
. "$(dirname "$0")/lib.sh"

modprobe -r softhca 2>/dev/null
modprobe softhca poller_cpu=1 poll_idle_us=1000000 poll_contended_us=0
veth_up sv0 sv1
rdma link add sh0 type softhca netdev sv0
rdma link add sh1 type softhca netdev sv1
gid0_usable sh0 sv0 || echo "# GID 0 of sh0 not usable yet"
gid0_usable sh1 sv1 || echo "# GID 0 of sh1 not usable yet"
SOFTHCA_DEV=sh0 "$SELFTESTS/datapath"
rc=$?
SOFTHCA_DEV=sh0 SOFTHCA_DEV2=sh1 "$SELFTESTS/datapath" || rc=1
cleanup_all
exit $rc
