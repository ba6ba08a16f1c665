#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Systematic fault injection (failnth.c): every verbs command that
# allocates in the kernel, and "rdma link add", has its 1st, 2nd, ...
# allocation failed in turn through /proc/thread-self/fail-nth until it
# succeeds; each failure must end in a clean errno and leave nothing
# behind, and the objects finally made must work.  Needs a kernel with
# FAULT_INJECTION, FAILSLAB, FAIL_PAGE_ALLOC and FAULT_INJECTION_DEBUG_FS
# (the sanitizer tier's debug kernel); skipped, saying why, elsewhere.
# On the debug kernel the guest's kmemleak scan follows the run.
#
# kmemleak (debug kernel) is scanned before and after the sweeps here, and
# what is new is one test point (objects reported before it are other
# tests'): it fails unless failnth_sweep.h's list of known 6.1 ib_core bugs
# explains every new report, which are then cleared so that the guest's
# own scan after the run (which fails it on any report) sees only what
# comes later.  softhca says, when sh0 goes, how many XRC domains ib_core
# never deallocated: exactly as many as the known ib_create_qp_user()
# leak explains, or the test fails.
#
# Environment: FAILNTH_VERBOSE (fault-injection verbosity of the attempts
# that need no stack, default 0: a line per injected fault would overrun
# the 128 KiB kernel log in which the guest looks for splats; 2 adds a
# stack trace, for chasing a failure), FAILNTH_CAP (highest n tried per
# command, default 200), FAILNTH_STRIDE, FAILNTH_STACKS (failnth.c).
. "$(dirname "$0")/lib.sh"

dbg=/sys/kernel/debug
fs=$dbg/failslab
fp=$dbg/fail_page_alloc

# Why fault injection cannot run here, or nothing.
why_not() {
	[ -e /proc/self/fail-nth ] ||
		{ echo "no /proc/self/fail-nth (kernel without CONFIG_FAULT_INJECTION)"; return; }
	[ -d $fs ] ||
		{ echo "no $fs (kernel without CONFIG_FAILSLAB or FAULT_INJECTION_DEBUG_FS)"; return; }
	[ -d $fp ] ||
		{ echo "no $fp (kernel without CONFIG_FAIL_PAGE_ALLOC)"; return; }
}

# failslab's cache filter on when kmemleak's caches are the ones left
# out of it (the sanitizer tier boots with slub_debug=A, kmemleak's
# caches excepted: tools/vm/run-guest): kmemleak makes an object for
# every allocation it tracks, and failing that is not the kernel under
# test failing (kmemleak's pool absorbs it; a production kernel has no
# such site).  Elsewhere every cache stays failable, kmemleak's too.
cache_filter() {
	sl=/sys/kernel/slab
	if [ "$(cat $sl/kmemleak_object/failslab 2>/dev/null)" = 0 ] &&
	   [ "$(cat $sl/kmalloc-64/failslab 2>/dev/null)" = 1 ]; then
		echo "NOTE: failslab: every cache but kmemleak's (cache filter)"
		echo Y > $fs/cache-filter
	else
		echo "NOTE: failslab: every cache (no cache filter: kmemleak's are not set apart)"
		echo N > $fs/cache-filter
	fi
}

# In 6.1 both injectors pass over sleeping (GFP_KERNEL) allocations by
# default and fail_page_alloc over highmem ones: the commands make the
# former.  probability stays 0, so only fail-nth injects.
inject_setup() {
	saved="$(cat $fs/ignore-gfp-wait $fs/verbose $fp/ignore-gfp-wait \
		$fp/ignore-gfp-highmem $fp/min-order $fp/verbose \
		$fs/cache-filter | tr '\n' ' ')"
	cache_filter &&
	echo N > $fs/ignore-gfp-wait &&
	echo N > $fp/ignore-gfp-wait &&
	echo N > $fp/ignore-gfp-highmem &&
	echo 0 > $fp/min-order &&
	echo "${FAILNTH_VERBOSE:-0}" > $fs/verbose &&
	echo "${FAILNTH_VERBOSE:-0}" > $fp/verbose
}

inject_restore() {
	# shellcheck disable=SC2086
	set -- $saved
	[ $# = 7 ] || return 0
	echo "$7" > $fs/cache-filter
	echo "$1" > $fs/ignore-gfp-wait
	echo "$2" > $fs/verbose
	echo "$3" > $fp/ignore-gfp-wait
	echo "$4" > $fp/ignore-gfp-highmem
	echo "$5" > $fp/min-order
	echo "$6" > $fp/verbose
}

kml=$dbg/kmemleak

# The addresses of the objects kmemleak reports now, after a scan.
kmemleak_objects() {
	echo scan > $kml
	[ "${1:-}" = twice ] && echo scan > $kml
	sed -n 's/^unreferenced object \(0x[0-9a-f]*\).*/\1/p' $kml | sort
}

# The reports of the objects listed in file $1, one line per backtrace
# (its first frames): how many objects, where they were allocated.
kmemleak_summary() {
	awk -v list="$1" '
		function flush() { if (on && sig != "") cnt[sig]++; on = 0 }
		BEGIN { while ((getline a < list) > 0) want[a] = 1 }
		/^unreferenced object/ { flush(); on = ($3 in want); sig = ""; n = 0; next }
		on && /\[<[0-9a-f]+>\]/ {
			f = $2; sub(/\+.*/, "", f)
			if (n++ < 8) sig = sig (sig == "" ? "" : " < ") f
		}
		END { flush(); for (s in cnt) printf "%d x %s\n", cnt[s], s }
	' $kml
}

# Nothing kmemleak reports is new since the sweeps began, except what
# a known 6.1 ib_core bug explains ("failnth kmemleak": the known bugs
# are listed in failnth_sweep.h only).  Run after the devices are deleted,
# while softhca is still loaded: a frame of an unloaded module has no
# name, and failnth takes a nameless frame for softhca's.  kmemleak
# reports only objects older than 5 s: the scans wait for that since
# the sweeps ended.  When every report is explained and none was there
# before, they are cleared ("clear": not reported again), so that the
# guest's own scan after the run reports only what comes later.
kmemleak_nothing_new() {
	[ -w $kml ] || { echo "SKIP: no kmemleak in this kernel"; return 77; }
	age=$(( $(date +%s) - $(cat /tmp/failnth.end 2>/dev/null || echo 0) ))
	[ $age -lt 6 ] && sleep $((6 - age))
	kmemleak_objects twice > /tmp/failnth.kml.after
	comm -13 /tmp/failnth.kml.before /tmp/failnth.kml.after > /tmp/failnth.kml.new
	[ -s /tmp/failnth.kml.new ] || return 0
	cat $kml > /tmp/failnth.kml.report
	"$SELFTESTS/failnth" kmemleak /tmp/failnth.kml.report \
		/tmp/failnth.kml.new /tmp/failnth.known || return 1
	if [ -s /tmp/failnth.kml.before ]; then
		echo "NOTE: kmemleak: not cleared: $(wc -l < /tmp/failnth.kml.before) reports from before the sweeps"
	else
		echo clear > $kml
		echo "NOTE: kmemleak: $(wc -l < /tmp/failnth.kml.new) reports of known kernel bugs cleared"
	fi
}

# softhca_dealloc_driver() says how many XRC domains ib_core never
# deallocated on sh0: exactly those the sweeps saw leak through the
# known ib_create_qp_user() bug, no more, no fewer.
xrcd_count_said() {
	[ -z "$(why_not)" ] || { echo "SKIP: no fault injection, no sweeps"; return 77; }
	want=$(sed -n 's/^xrcd_leaks_excused //p' /tmp/failnth.known 2>/dev/null)
	said=$(dmesg | awk '/failnth: deleting sh0/ { n = 0 }
		/ sh0: [0-9]+ XRC domains never deallocated by ib_core/ {
			sub(/.* sh0: /, ""); n += $1 }
		END { print n + 0 }')
	[ "$said" = "${want:-0}" ] && return 0
	echo "softhca says sh0 had $said XRC domains ib_core never deallocated; the known bug explains ${want:-0}"
	return 1
}

sweeps() {
	reason=$(why_not)
	if [ -n "$reason" ]; then
		echo "SKIP: $reason"
		return 77
	fi
	inject_setup || { echo "cannot configure fault injection"; return 1; }
	start=$(date +%s)
	# A sanitizer allocator whose mmap the fault hit answers NULL (the
	# library's ENOMEM path) instead of ending the process.
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}allocator_may_return_null=1 \
	SOFTHCA_DEV=sh0 FAILNTH_NETDEV=sv2 FAILNTH_KNOWN=/tmp/failnth.known \
		timeout -k 10 1200 "$SELFTESTS/failnth"
	rc=$?
	date +%s > /tmp/failnth.end
	inject_restore
	echo "NOTE: fail-nth: the sweeps took $(($(date +%s) - start)) s"
	[ $rc = 124 ] && echo "failnth did not end within 1200 s"
	return $rc
}

# No PD, CQ, QP, MR, SRQ or context left on sh0 (rdma resource show).
nothing_left() {
	left=$(user_left sh0)
	[ -z "$left" ] || { echo "left behind: $left"; rdma resource show; return 1; }
}

no_link_left() {
	! dev_exists shfail0 || { echo "shfail0 left behind"; return 1; }
}

rm -f /tmp/failnth.*
modprobe -r softhca 2>/dev/null
modprobe softhca
softhca_on_veth 1
# The link-add sweep's netdev, its IPv6 address settled before the sweep
# so that the device it makes has a usable GID 0 at once.
veth_up sv2 sv3
wait_for 10 sh -c "ip -6 addr show dev sv2 scope link | grep -q inet6 && ! ip -6 addr show dev sv2 tentative | grep -q inet6"

[ -w $kml ] && kmemleak_objects > /tmp/failnth.kml.before
t "fail-nth: allocating verbs commands and rdma link add" sweeps
t "fail-nth: no object left on sh0" nothing_left
t "fail-nth: the link-add device is gone" no_link_left
t "fail-nth: the device still works" sh -c 'SOFTHCA_DEV=sh0 "$1" >/dev/null' _ "$SELFTESTS/verbs_query"
# The devices go, the module stays (see kmemleak_nothing_new).
echo "failnth: deleting sh0" > /dev/kmsg
rdma link delete sh0
ip link del sv0 2>/dev/null
ip link del sv2 2>/dev/null
t "fail-nth: softhca's count of XRC domains ib_core left matches the known bug" xrcd_count_said
# After the devices are gone: what a failed call kept is unreferenced now.
t "fail-nth: kmemleak reports nothing new but known kernel bugs" kmemleak_nothing_new
cleanup_all
tap_done
