#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# XRC (xrc.c, TAP): on one device, then initiators on sh0 and receive QPs
# and SRQs on sh1; the XRC ping-pong between processes, a server for two
# clients, many rounds on a busy CPU (xsrq.c, TAP), with the module's
# default parameters, on one device and across two; afterwards no QP,
# SRQ or XRC domain is left behind by the processes that exited, were
# killed or unregistered.  make check's debug tier runs the two-device
# rounds only (lib.sh: one_device_round).
. "$(dirname "$0")/lib.sh"

modprobe -r softhca 2>/dev/null
modprobe softhca
softhca_on_veth 2
rc=0
if one_device_round xrc; then
	SOFTHCA_DEV=sh0 "$SELFTESTS/xrc" || rc=1
fi
SOFTHCA_DEV=sh0 SOFTHCA_DEV2=sh1 "$SELFTESTS/xrc" || rc=1
if one_device_round xsrq; then
	XSRQ_ROUNDS=$(scaled 12) SOFTHCA_DEV=sh0 "$SELFTESTS/xsrq" || rc=1
fi
SOFTHCA_DEV=sh0 SOFTHCA_DEV2=sh1 XSRQ_ROUNDS=$(scaled 6) "$SELFTESTS/xsrq" || rc=1
# Nothing leaked: every object count of both devices is back to zero.
left=$(user_left sh0 sh1)
if [ -n "$left" ]; then
	echo "not ok - xrc: objects left behind: $left"
	rdma resource show
	rc=1
else
	echo "ok - xrc: no object left behind"
fi
cleanup_all
exit $rc
