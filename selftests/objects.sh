#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Verbs objects, the QP state machine and the flush (verbs_objects, TAP).
. "$(dirname "$0")/lib.sh"

modprobe softhca
veth_up sv0 sv1
rdma link add sh0 type softhca netdev sv0
gid0_usable sh0 sv0 || echo "# GID 0 of sh0 not usable yet"
SOFTHCA_DEV=sh0 "$SELFTESTS/verbs_objects"
rc=$?
cleanup_all
exit $rc
