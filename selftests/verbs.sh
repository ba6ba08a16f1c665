#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Device discovery and queries through libsofthca (verbs_query, TAP).
. "$(dirname "$0")/lib.sh"

modprobe softhca
veth_up sv0 sv1
ip addr add 198.51.100.7/24 dev sv0
rdma link add sh0 type softhca netdev sv0
# Let ib_core's GID worker pick up the address.
wait_for 5 sh -c 'grep -qs "0000:0000:0000:0000:0000:ffff:c633:6407" /sys/class/infiniband/sh0/ports/1/gids/*'
SOFTHCA_DEV=sh0 SOFTHCA_NETDEV=sv0 SOFTHCA_IPV4=198.51.100.7 "$SELFTESTS/verbs_query"
rc=$?
cleanup_all
exit $rc
