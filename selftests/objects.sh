#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Verbs objects, the QP state machine and the flush (verbs_objects, TAP).
. "$(dirname "$0")/lib.sh"

modprobe softhca
softhca_on_veth 1
SOFTHCA_DEV=sh0 "$SELFTESTS/verbs_objects"
rc=$?
cleanup_all
exit $rc
