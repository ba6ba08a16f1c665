#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Module load/unload, metadata, parameters, autoloading, and unloading
# with devices present.
. "$(dirname "$0")/lib.sh"

modinfo_ok() {
	info=$(modinfo softhca) || return 1
	for want in "license:        GPL" "version:        0.1.0" \
		    "alias:          rdma-link-softhca" "depends:        ib_uverbs,ib_core" \
		    "description:    softhca"; do
		case "$info" in
		*"$want"*) ;;
		*) echo "modinfo lacks '$want'"; echo "$info"; return 1 ;;
		esac
	done
}

load_unload() {
	modprobe softhca || return 1
	[ -d /sys/module/softhca ] || { echo "not loaded"; return 1; }
	[ "$(cat /sys/module/softhca/parameters/max_pd)" = 65536 ] || return 1
	rmmod softhca || return 1
	[ ! -d /sys/module/softhca ] || { echo "still loaded"; return 1; }
	# And again: nothing left from the first round blocks the second.
	modprobe softhca && rmmod softhca
}

bad_param() {
	fails modprobe softhca max_pd=0 || return 1
	[ ! -d /sys/module/softhca ] || { echo "loaded with max_pd=0"; return 1; }
	modprobe softhca max_pd=7 || return 1
	[ "$(cat /sys/module/softhca/parameters/max_pd)" = 7 ] || return 1
	# Read-only once loaded.
	fails sh -c 'echo 9 > /sys/module/softhca/parameters/max_pd' || return 1
	rmmod softhca
}

# icrc_choice: the ICRC's bulk is summed by the faster of crc32_le() and
# the crypto API's crc32, as the module timed them at load (icrc.c); the
# parameter says which and the times.  Written, it switches (shash only
# where there is one), and a bad value is refused.
icrc_choice() {
	modprobe softhca || return 1
	p=/sys/module/softhca/parameters/icrc
	v=$(cat $p)
	echo "NOTE: icrc: $v"
	case "$v" in
	*"no crc32 shash"*)
		[ "${v%% *}" = table ] || { echo "no shash, yet not the tables"; return 1; }
		fails sh -c "echo shash > $p" || return 1 ;;
	*)
		# shellcheck disable=SC2046
		set -- $(echo "$v" | sed -nE 's/^([a-z]+) \(auto; ([0-9]+) ns per 4 KiB with crc32_le, ([0-9]+) with .*/\1 \2 \3/p')
		[ $# = 3 ] || { echo "cannot read the parameter"; return 1; }
		if [ "$2" -le "$3" ]; then want=table; else want=shash; fi
		[ "$1" = "$want" ] || { echo "chose $1, but $want was faster"; return 1; }
		for m in shash table auto; do
			echo $m > $p || return 1
		done
		[ "$(cut -d' ' -f1 $p)" = "$want" ] || { echo "auto again is not $want"; return 1; } ;;
	esac
	fails sh -c "echo fast > $p" || return 1
	rmmod softhca
}

autoload() {
	[ ! -d /sys/module/softhca ] || rmmod softhca
	rdma link add sh0 type softhca netdev sv0 || return 1
	[ -d /sys/module/softhca ] || { echo "not autoloaded"; return 1; }
	dev_exists sh0 || return 1
	rdma link delete sh0
}

rmmod_with_devices() {
	[ ! -d /sys/module/softhca ] || rmmod softhca || return 1
	ib_ref=$(awk '$1 == "ib_core" { print $3 }' /proc/modules)
	rdma link add sh0 type softhca netdev sv0 || return 1
	rdma link add sh1 type softhca netdev sv1 || return 1
	rdma link add sh2 type softhca netdev sv2 || return 1
	# A process holding a device open does not block the unload.
	rm -f /tmp/held
	"$SELFTESTS/hold_device" sh1 /tmp/held &
	holder=$!
	wait_for 10 test -e /tmp/held || { kill $holder; return 1; }
	# A hang detector, not a time limit (the debug kernel beside make
	# check's other guests is slow).
	timeout 120 rmmod softhca || { kill $holder; echo "rmmod failed or hung"; return 1; }
	kill -USR1 $holder
	wait $holder || { echo "holder failed"; return 1; }
	no_softhca_devices || return 1
	[ "$(awk '$1 == "ib_core" { print $3 }' /proc/modules)" = "$ib_ref" ] ||
		{ echo "ib_core refcount $ib_ref -> now different"; return 1; }
	# The netdevs are free: deleting them does not wait on a reference.
	netdev_del sv0 && netdev_del sv2
}

veth_up sv0 sv1 && ip link add sv2 type dummy && ip link set sv2 up
t modinfo modinfo_ok
t load_unload load_unload
t bad_module_parameter bad_param
t icrc_implementation_chosen_by_speed icrc_choice
t autoload_on_rdma_link_add autoload
t rmmod_with_devices_present rmmod_with_devices
cleanup_all
tap_done
