#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The port follows its netdev: carrier, admin state, MTU, and
# unregistration of the netdev removes the device.
. "$(dirname "$0")/lib.sh"

state_is() { port_attr sh0 state | grep -q "$1"; }
mtu_is() { "$TOOL" show sh0 | grep -q "mtu $1\$"; }

carrier() {
	state_is ACTIVE || return 1
	ip link set sv1 down		# peer down: sv0 loses carrier
	wait_for 5 state_is DOWN || return 1
	port_attr sh0 phys_state | grep -q Polling || { port_attr sh0 phys_state; return 1; }
	"$TOOL" show sh0 | grep -q "state DOWN" || return 1
	ip link set sv1 up
	wait_for 5 state_is ACTIVE || return 1
	port_attr sh0 phys_state | grep -q LinkUp
}

admin_down() {
	ip link set sv0 down
	wait_for 5 state_is DOWN || return 1
	port_attr sh0 phys_state | grep -q Disabled || { port_attr sh0 phys_state; return 1; }
	ip link set sv0 up
	wait_for 5 state_is ACTIVE
}

mtu() {
	mtu_is 1024 || { "$TOOL" show sh0; return 1; }
	ip link set sv0 mtu 9000 && mtu_is 4096 || return 1
	ip link set sv0 mtu 2200 && mtu_is 2048 || return 1
	ip link set sv0 mtu 1000 && mtu_is 512 || return 1
	ip link set sv0 mtu 400 && mtu_is 256 || return 1
	state_is ACTIVE || return 1
	# Too small for any IB MTU: the port goes down, and comes back.
	ip link set sv0 mtu 300 && wait_for 5 state_is DOWN || return 1
	ip link set sv0 mtu 1500 && wait_for 5 state_is ACTIVE || return 1
	mtu_is 1024
}

port_events() {
	"$SELFTESTS/port_events" sh0 "ip link set sv1 down" "ip link set sv1 up"
}

netdev_unregister() {
	veth_up sv2 sv3 || return 1
	rdma link add sh2 type softhca netdev sv2 || return 1
	netdev_del sv2 || return 1
	wait_for 10 sh -c '! test -e /sys/class/infiniband/sh2' || return 1
	# The name is free again.
	veth_up sv2 sv3 && rdma link add sh2 type softhca netdev sv2 &&
		rdma link delete sh2 && ip link del sv2
}

netdev_unregister_while_open() {
	veth_up sv2 sv3 || return 1
	rdma link add sh2 type softhca netdev sv2 || return 1
	rm -f /tmp/held
	"$SELFTESTS/hold_device" sh2 /tmp/held &
	holder=$!
	wait_for 10 test -e /tmp/held || { kill $holder; return 1; }
	netdev_del sv2 || { kill $holder; return 1; }
	wait_for 10 sh -c '! test -e /sys/class/infiniband/sh2' || { kill $holder; return 1; }
	kill -USR1 $holder
	wait $holder
}

modprobe softhca
veth_up sv0 sv1
rdma link add sh0 type softhca netdev sv0
t carrier_follows_peer carrier
t admin_down admin_down
t mtu_follows_netdev mtu
t port_events_reach_userspace port_events
t netdev_unregister_removes_device netdev_unregister
t netdev_unregister_with_device_open netdev_unregister_while_open
cleanup_all
tap_done
