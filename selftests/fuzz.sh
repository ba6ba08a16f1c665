#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The verbs fuzzer (fuzz.c): FUZZ_SECS seconds (default 60 on the debug
# kernel, 30 on Debian's, for make check's time) of random
# verbs calls, valid and not, from three processes on sh0 and sh1, killed
# with SIGKILL and replaced now and then while sh1's link is deleted and
# added again.  Then every process is gone, neither device holds an
# object, both still carry a SEND and an RDMA WRITE, and the kernel
# logged no splat (run-guest fails the run on one as well).  FUZZ_SEED
# replays a run; the outcome table is printed last.
. "$(dirname "$0")/lib.sh"

export SOFTHCA_DEV=sh0 SOFTHCA_DEV2=sh1 FUZZ_NETDEV2=sv1
if debug_kernel; then
	export FUZZ_SECS=${FUZZ_SECS:-60}
else
	export FUZZ_SECS=${FUZZ_SECS:-30}
fi
export FUZZ_OUT=/tmp/fuzz-outcomes.txt
# A sanitizer report ends the worker (non-zero status: a failure).
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
PERF=$REPO/build/bin/softhca-perf

modprobe -r softhca 2>/dev/null
modprobe softhca
softhca_on_veth 2
dmesg -C

# still_usable: an RC SEND and an RDMA WRITE from sh0 to sh1 (softhca-perf
# checks every completion's status).
still_usable() {
	gid0_usable sh1 sv1 || return 1
	timeout 60 "$PERF" send_lat -d sh0 -D sh1 -s 4096 -n 200 &&
	timeout 60 "$PERF" write_bw -d sh0 -D sh1 -s 64K -n 200
}

no_splat() {
	! dmesg | grep -E 'BUG:|WARNING:|UBSAN:|KASAN:|Oops|circular locking|blocked for more'
}

t "fuzz_${FUZZ_SECS}s" "$SELFTESTS/fuzz"
t no_fuzz_process_left sh -c '! pgrep -x fuzz'
t no_object_left objects_gone sh0 sh1
t devices_still_usable still_usable
t no_kernel_splat no_splat
echo "# (operation:errno count) outcomes of the run:"
sed 's/^/# /' "$FUZZ_OUT" 2>/dev/null
cleanup_all
tap_done
