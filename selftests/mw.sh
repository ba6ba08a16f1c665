#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Memory windows (mw.c, TAP): on one device, then with the window's
# side on a second device, then the same two devices with same_host off:
# every access through a window crosses the veth as RoCEv2, so the
# wire's responder (wire_resp.c, wire_rc_resp.c: READs answered through
# the window's key, checked again before each batch) and the invalidation
# by a received SEND_WITH_INV are the ones taken.  sh1's counters must
# show READ responses sent.
. "$(dirname "$0")/lib.sh"

# rdma_rxe, loaded, holds UDP 4791 here: softhca's devices would have
# no RoCEv2 (net.c), and the third run would lose every message.
if grep -q '^rdma_rxe ' /proc/modules && ! modprobe -r rdma_rxe; then
	echo "# rdma_rxe is loaded and cannot be unloaded: no RoCEv2 for softhca here"
	exit 1
fi
modprobe softhca
softhca_on_veth 2
SOFTHCA_DEV=sh0 "$SELFTESTS/mw"
rc=$?
SOFTHCA_DEV=sh0 SOFTHCA_DEV2=sh1 "$SELFTESTS/mw" || rc=1
hw=/sys/class/infiniband/sh1/ports/1/hw_counters
if [ -w /sys/module/softhca/parameters/same_host ]; then
	echo N > /sys/module/softhca/parameters/same_host
	r0=$(cat $hw/tx_read_resps)
	echo "# the same over RoCEv2 (same_host N)"
	SOFTHCA_DEV=sh0 SOFTHCA_DEV2=sh1 "$SELFTESTS/mw" || rc=1
	echo Y > /sys/module/softhca/parameters/same_host
	r=$(($(cat $hw/tx_read_resps) - r0))
	echo "# sh1 sent $r READ responses through windows, $(cat $hw/tx_naks) NAKs in all"
	[ "$r" -gt 0 ] || { echo "# nothing crossed the wire"; rc=1; }
else
	echo "# softhca has no same_host parameter"
	rc=1
fi
cleanup_all
exit $rc
