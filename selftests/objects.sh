#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Verbs objects, the QP state machine and the flush (verbs_objects, TAP).
. "$(dirname "$0")/lib.sh"

modprobe softhca
veth_up sv0 sv1
rdma link add sh0 type softhca netdev sv0
# GID 0 (the link-local address) comes from ib_core's GID worker.
wait_for 5 sh -c 'grep -qsv "^0000:0000:0000:0000:0000:0000:0000:0000$" /sys/class/infiniband/sh0/ports/1/gids/0'
SOFTHCA_DEV=sh0 "$SELFTESTS/verbs_objects"
rc=$?
cleanup_all
exit $rc
