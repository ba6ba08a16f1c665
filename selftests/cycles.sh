#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Add/delete cycles through both tools leave no device and no leak.
. "$(dirname "$0")/lib.sh"

# Shrinking every slab cache empties its per-CPU partial slabs and, on the
# debug kernel, KASAN's quarantine of that cache (freed objects wait there
# and still count as slab): without it SUnreclaim there moves by hundreds
# of kB between two reads with nothing leaked.
unreclaimable_kb() {
	sync
	echo 3 > /proc/sys/vm/drop_caches
	for f in /sys/kernel/slab/*/shrink; do
		echo 1 > "$f" 2>/dev/null
	done
	awk '/^SUnreclaim:/ { print $2 }' /proc/meminfo
}

# slab_bytes FILE: each cache's bytes in use (active objects times size).
slab_bytes() {
	awk 'NR > 2 { print $1, $2 * $4 }' /proc/slabinfo | sort > "$1"
}

# The caches that grew most between two slab_bytes snapshots.
slab_growth() {
	join "$1" "$2" | awk '$3 - $2 > 0 { print $3 - $2, $1 }' |
		sort -rn | head -8 | sed 's/^/#   grew /'
}

cycle() {
	n=$1
	i=0
	while [ $i -lt "$n" ]; do
		if [ $((i % 2)) = 0 ]; then
			rdma link add sh0 type softhca netdev sv0 || return 1
			"$TOOL" link del sh0 || return 1
		else
			"$TOOL" link add sh0 netdev sv0 || return 1
			rdma link delete sh0 || return 1
		fi
		i=$((i + 1))
	done
}

hundred_cycles() {
	start=$(date +%s)
	n=$(scaled 100)
	cycle "$n" || return 1
	no_softhca_devices || return 1
	echo "NOTE: $n add/delete cycles in $(( $(date +%s) - start )) s"
}

no_slab_growth() {
	# The first hundred cycles grow slab caches (about 200 kB measured);
	# after that a clean driver stays flat (+12..+24 kB per hundred).
	# The hundred before (hundred_cycles) are those: this point runs
	# right after it.  The debug kernel: kmemleak judges leaks there;
	# fewer rounds.
	sleep 1
	before=$(unreclaimable_kb)
	slab_bytes "/tmp/cycles.slab.before"
	cycle "$(scaled 200)" || return 1
	# Process structures (sighand, signal, files) are freed after an
	# RCU grace period, which under load (make check runs two guests on
	# two CPUs) can outlast a second: one run saw 208 kB, most of it
	# theirs.  A leak stays; those go: read again, up to 5 s.
	tries=0
	while :; do
		sleep 1
		after=$(unreclaimable_kb)
		growth=$((after - before))
		tries=$((tries + 1))
		[ "$growth" -ge 200 ] && [ $tries -lt 5 ] || break
	done
	slab_bytes "/tmp/cycles.slab.after"
	no_softhca_devices || return 1
	echo "NOTE: SUnreclaim over $(scaled 200) cycles: ${before} kB -> ${after} kB (${growth} kB, read $tries times)"
	# A leaked device costs well over 4 kB (ib_device, port data, GID
	# table, sysfs); a leak of 1 kB per cycle already crosses 200 kB.
	slab_growth "/tmp/cycles.slab.before" "/tmp/cycles.slab.after"
	[ "$growth" -lt 200 ] || { echo "unreclaimable slab grew ${growth} kB"; return 1; }
}

no_references_left() {
	ib_ref=$(awk '$1 == "ib_core" { print $3 }' /proc/modules)
	rmmod softhca || return 1
	[ "$(awk '$1 == "ib_core" { print $3 }' /proc/modules)" -lt "$ib_ref" ] || return 1
	netdev_del sv0
}

modprobe softhca
veth_up sv0 sv1
t hundred_add_delete_cycles hundred_cycles
t no_unreclaimable_slab_growth no_slab_growth
t no_references_left no_references_left
cleanup_all
tap_done
