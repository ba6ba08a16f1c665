#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Memory windows (mw.c, TAP): on one device, then with the window's
# side on a second device.
. "$(dirname "$0")/lib.sh"

modprobe softhca
softhca_on_veth 2
SOFTHCA_DEV=sh0 "$SELFTESTS/mw"
rc=$?
SOFTHCA_DEV=sh0 SOFTHCA_DEV2=sh1 "$SELFTESTS/mw" || rc=1
cleanup_all
exit $rc
