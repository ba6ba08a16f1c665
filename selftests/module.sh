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
	timeout 30 rmmod softhca || { kill $holder; return 1; }
	kill -USR1 $holder
	wait $holder || { echo "holder failed"; return 1; }
	no_softhca_devices || return 1
	[ "$(awk '$1 == "ib_core" { print $3 }' /proc/modules)" = "$ib_ref" ] ||
		{ echo "ib_core refcount $ib_ref -> now different"; return 1; }
	# The netdevs are free: deleting them does not wait on a reference.
	timeout 15 ip link del sv0 && timeout 15 ip link del sv2
}

veth_up sv0 sv1 && ip link add sv2 type dummy && ip link set sv2 up
t modinfo modinfo_ok
t load_unload load_unload
t bad_module_parameter bad_param
t autoload_on_rdma_link_add autoload
t rmmod_with_devices_present rmmod_with_devices
cleanup_all
tap_done
